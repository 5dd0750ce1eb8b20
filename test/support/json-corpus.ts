// Seeded generator of JSON texts (written by hand, not by JSON.stringify, to vary whitespace, escapes and numbers)

import { mulberry32 } from '../../bench/lib/random.mjs'

/** A seeded source of random choices, so every run builds the same corpus. */
export class Gen {
  private readonly next: () => number
  constructor(seed: number) {
    this.next = mulberry32(seed)
  }
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }
}

const STRING_PIECES = [
  'a',
  'hello',
  'world ',
  ' ',
  'x y z',
  '0',
  '"', // '"' is escaped below
  '\\n',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\r',
  '\\t',
  '\\u00e9',
  '\\u00E9',
  '\\uD83D\\uDE00',
  '\\ud800',
  '\\uDFFF',
  '\\u0000',
  '\\u001F',
  'é',
  'ü',
  '中文',
  '这是测试',
  '😀',
  '🎉x',
  '\u007f',
  '\u2028',
  '\u00a0',
  'ключ',
]

/** Whitespace between tokens: mostly none, else a few of JSON's four kinds. */
export function ws(g: Gen): string {
  if (g.chance(0.7)) return ''
  let s = ''
  for (let k = 1 + g.int(3); k > 0; k--) s += g.pick([' ', '\t', '\n', '\r', '  '])
  return s
}

/** A JSON string literal of random pieces, escapes among them; `long` makes it tens of pieces. */
export function stringText(g: Gen, long = false): string {
  let s = '"'
  const pieces = long ? 20 + g.int(60) : g.int(6)
  for (let k = 0; k < pieces; k++) {
    const piece = g.pick(STRING_PIECES)
    s += piece === '"' ? '\\"' : piece
  }
  return `${s}"`
}

function digits(g: Gen, count: number): string {
  let s = ''
  for (let k = 0; k < count; k++) s += String(g.int(10))
  return s
}

/** A JSON number, from plain to hundreds of digits long. */
export function numberText(g: Gen): string {
  let s = g.chance(0.3) ? '-' : ''
  s += g.chance(0.3) ? '0' : String(1 + g.int(9)) + digits(g, g.int(g.chance(0.1) ? 40 : 4))
  if (g.chance(0.3)) s += `.${digits(g, 1 + g.int(g.chance(0.1) ? 30 : 4))}`
  if (g.chance(0.25)) s += g.pick(['e', 'E']) + g.pick(['', '+', '-']) + digits(g, 1 + g.int(3))
  if (g.chance(0.02))
    s =
      (g.chance(0.5) ? '-' : '') +
      String(1 + g.int(9)) +
      digits(g, 900 + g.int(300)) +
      '.' +
      digits(g, g.int(900)) +
      'e-' +
      String(g.int(1200))
  return s
}

const KEYS = ['a', 'b', 'role', 'content', 'model', '__proto__', 'é', '', 'k\\u0041', 'x y', 'parts', 'text']

/** Any JSON value as text, nested below `depth` (objects in it may repeat a key). */
export function valueText(g: Gen, depth: number): string {
  const kind = depth > 5 ? 4 + g.int(6) : g.int(10)
  switch (kind) {
    case 0:
    case 1: {
      const members: string[] = []
      for (let k = g.int(5); k > 0; k--)
        members.push(`${ws(g)}${g.chance(0.6) ? `"${g.pick(KEYS)}"` : stringText(g)}${ws(g)}:${ws(g)}${valueText(g, depth + 1)}${ws(g)}`)
      return `{${members.join(',') || ws(g)}}`
    }
    case 2:
    case 3: {
      const items: string[] = []
      for (let k = g.int(5); k > 0; k--) items.push(`${ws(g)}${valueText(g, depth + 1)}${ws(g)}`)
      return `[${items.join(',') || ws(g)}]`
    }
    case 4:
    case 5:
      return stringText(g, g.chance(0.1))
    case 6:
    case 7:
      return numberText(g)
    case 8:
      return g.pick(['true', 'false', 'null'])
    default:
      return g.chance(0.5) ? stringText(g) : numberText(g)
  }
}

function objectText(members: string[], g: Gen): string {
  return `${ws(g)}{${members.map((m) => `${ws(g)}${m}${ws(g)}`).join(',') || ws(g)}}${ws(g)}`
}

function shuffle<T>(g: Gen, items: T[]): T[] {
  for (let k = items.length - 1; k > 0; k--) {
    const j = g.int(k + 1)
    ;[items[k], items[j]] = [items[j] as T, items[k] as T]
  }
  return items
}

function messageText(g: Gen): string {
  const r = g.int(12)
  if (r === 0) return g.pick(['null', '"user"', '12', '[]', '[{"role":"user"}]', stringText(g, true), `[${stringText(g, true)}]`])
  const members: string[] = []
  const role = g.pick([
    '"user"',
    '"assistant"',
    '"system"',
    '""',
    stringText(g, true),
    '1',
    'null',
    'true',
    '{"a":1}',
    `{"text":${stringText(g, true)}}`,
    '[]',
    '["user"]',
    'MISSING',
  ])
  if (role !== 'MISSING') members.push(`"role":${role}`)
  if (g.chance(0.8)) members.push(`"content":${g.chance(0.6) ? stringText(g, true) : valueText(g, 2)}`)
  if (g.chance(0.2)) members.push(`"name":${stringText(g)}`)
  if (g.chance(0.15))
    members.push(`"role":${g.pick(['"tool"', `{"big":${stringText(g, true)}}`, '5', stringText(g, true), `[${stringText(g, true)}]`])}`) // duplicate
  if (g.chance(0.1)) members.push(`"__proto__":${g.pick(['{"role":"user"}', '"x"', '{}', `{"role":${stringText(g, true)}}`])}`)
  if (g.chance(0.2)) members.push(`"${g.pick(KEYS)}":${valueText(g, 2)}`)
  return objectText(shuffle(g, members), g)
}

function chatText(g: Gen): string {
  // Half the documents are close to valid, so that checks late in validateChat are reached too.
  const nearlyValid = g.chance(0.5)
  const bad = () => !nearlyValid || g.chance(0.12)
  const members: string[] = []
  const model = bad()
    ? g.pick(['"gpt-4o"', '"m"', '""', stringText(g, true), '1', 'null', '{"name":"gpt"}', '["gpt"]', 'MISSING'])
    : g.pick(['"gpt-4o"', stringText(g, true)])
  if (model !== 'MISSING') members.push(`"model":${model}`)
  const messages = bad() ? g.int(10) : 2
  if (messages < 7) {
    const items: string[] = []
    for (let k = g.int(messages === 0 ? 1 : 6); k >= 0; k--)
      items.push(
        bad() ? messageText(g) : objectText([`"role":"${g.pick(['user', 'assistant'])}"`, `"content":${stringText(g, g.chance(0.5))}`], g),
      )
    if (messages === 1) items.length = 0
    members.push(`"messages":[${items.join(',')}${ws(g)}]`)
  } else if (messages < 9) {
    members.push(
      `"messages":${g.pick(['null', '{}', '{"0":{"role":"user"}}', stringText(g, true), '[]', `{"role":"user","content":${stringText(g, true)}}`])}`,
    )
  }
  // [name, valid spellings, invalid spellings]
  const scalars: Array<[string, string[], string[]]> = [
    ['stream', ['true', 'false', 'null'], ['"yes"', '1', '0', '{}', '[]']],
    [
      'temperature',
      ['0.7', '0', '2', '2.0000000000000001', '-0', `1${'0'.repeat(1000)}e-1000`, '0.00000000000000000000000000000001e32', 'null'],
      ['2.5', '-1', '"1"', '1e400', '[1]'],
    ],
    ['top_p', ['1', '0.5', '-0.0', '1.00000000000000001'], ['1.0000001', '2', 'true', '"0.5"']],
    ['presence_penalty', ['-2', '2', '0', '1E0', '1e-400'], ['-2.01', '3', '"x"']],
    ['frequency_penalty', ['1.5', '-0.5'], ['3', '"x"', '{}']],
    ['n', ['1', '3', '9007199254740991', '1e0', '10E-1'], ['0', '1.5', '9007199254740993', '-1', '"2"', '100000000000000000000']],
    ['max_tokens', ['100', '1.0', '1e3', 'null'], ['0', '2.5', '{}']],
    ['max_completion_tokens', ['1', '3.0e0'], ['-5', '"10"', '1e400']],
  ]
  for (const [name, good, wrong] of scalars) if (g.chance(0.4)) members.push(`"${name}":${g.pick(bad() ? wrong : good)}`)
  for (let k = g.int(3); k > 0; k--) members.push(`${g.chance(0.7) ? `"${g.pick(KEYS)}"` : stringText(g)}:${valueText(g, 1)}`)
  if (g.chance(0.1)) members.push(`"model":${g.pick(['"gpt-4o"', '""', '3', stringText(g, true), `{"x":${stringText(g, true)}}`])}`) // duplicate
  if (g.chance(0.05)) members.push(`"messages":${g.pick(['null', '[{"role":"user"}]', `[${messageText(g)}]`])}`) // duplicate
  if (g.chance(0.05)) members.push(`"__proto__":${g.pick(['{"model":"gpt-4o"}', '"x"', 'null', '[1]'])}`)
  return objectText(shuffle(g, members), g)
}

function geminiText(g: Gen): string {
  const members: string[] = []
  const r = g.int(10)
  if (r < 7) {
    const items: string[] = []
    for (let k = g.int(r === 0 ? 1 : 5); k >= 0; k--) {
      items.push(
        g.chance(0.85)
          ? objectText(
              [`"role":"${g.pick(['user', 'model'])}"`, `"parts":[{"text":${stringText(g, g.chance(0.6))}}]`].slice(0, 1 + g.int(2)),
              g,
            )
          : g.pick(['null', '1', '"text"', '[]', '[{"parts":[]}]', stringText(g, true), `[${stringText(g, true)}]`]),
      )
    }
    if (r === 1) items.length = 0
    members.push(`"contents":[${items.join(',')}]`)
  } else if (r < 9) {
    members.push(`"contents":${g.pick(['null', '{}', '"x"', `{"parts":[{"text":${stringText(g, true)}}]}`])}`)
  }
  if (g.chance(0.5)) members.push(`"generationConfig":{"temperature":${numberText(g)},"stopSequences":[${stringText(g)}]}`)
  if (g.chance(0.3)) members.push(`"systemInstruction":{"parts":[{"text":${stringText(g, true)}}]}`)
  if (g.chance(0.05)) members.push(`"contents":[{"role":"user"}]`)
  return objectText(shuffle(g, members), g)
}

/** A whole JSON text: mostly chat or Gemini bodies, valid or close to it, else any value. */
export function documentText(g: Gen): string {
  const r = g.int(10)
  if (r < 4) return chatText(g)
  if (r < 6) return geminiText(g)
  if (r < 9) return `${ws(g)}${valueText(g, 0)}${ws(g)}`
  return objectText([`"a":${valueText(g, 1)}`], g)
}

const INTERESTING_BYTES = Buffer.from('{}[]":,.-+0123456789eEtfnu\\ \t\n\r\x00\x01\x1f\x7f/xa', 'latin1')

/** `bytes` with one truncation, replaced, dropped or inserted byte, most likely one JSON cares about. */
export function mutate(g: Gen, bytes: Buffer): Buffer {
  const at = g.int(bytes.length + 1)
  const some = () => (g.chance(0.8) ? (INTERESTING_BYTES[g.int(INTERESTING_BYTES.length)] as number) : g.int(256))
  switch (g.int(5)) {
    case 0: // truncation
      return bytes.subarray(0, Math.min(at, bytes.length - 1))
    case 1: {
      if (bytes.length === 0) return Buffer.from([some()])
      const copy = Buffer.from(bytes)
      copy[Math.min(at, bytes.length - 1)] = some()
      return copy
    }
    case 2:
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)])
    case 3:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([some()]), bytes.subarray(at)])
    default:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(','), bytes.subarray(at)])
  }
}

/** Edge cases of the grammar that a random corpus reaches too rarely. */
export const SPECIAL_TEXTS = [
  '',
  ' ',
  ' \n\t\r ',
  '\ufeff{}',
  '\ufeff',
  '{}',
  ' {} ',
  '{}x',
  '{}}',
  '{} {}',
  '[]',
  '"x"',
  '1',
  '-0',
  'null',
  'true',
  '[1,',
  '[1]',
  '{"a":01}',
  '{"a":00}',
  '{"a":-01}',
  '{"a":1.}',
  '{"a":1.e5}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":-}',
  '{"a":-a}',
  '{"a":1e}',
  '{"a":1e+}',
  '{"a":1E-}',
  '{"a":1e5}',
  '{"a":1E+05}',
  '{"a":-0.0e-0}',
  '{"a":0.5}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":-Infinity}',
  '{"a":0x10}',
  '{"a":"\\x"}',
  '{"a":"\\u12G4"}',
  '{"a":"\\u12"}',
  '{"a":"\\u"}',
  '{"a":"\\U0041"}',
  '{"a":"\\a"}',
  '{"a":"\\\'"}',
  '{"a":"\\/"}',
  '{"a":"\\"}',
  '{"a":"a\nb"}',
  '{"a":"\t"}',
  '{"a":"\u0001"}',
  '{"a":"\u001f"}',
  '{"a":"\u0000"}',
  '{"a":"\u007f"}',
  '{"a":"\u2028\u2029"}',
  '{"a":"\\ud800"}',
  '{"a":"\\udc00\\ud800"}',
  '{"a":"\\uDBFF\\uDFFF"}',
  '{"\\u0000":1}',
  '{"\\ud800":1,"\\ud800":2}',
  '{"a":tru}',
  '{"a":nul}',
  '{"a":fals}',
  '{"a":truex}',
  '{"a":nulll}',
  '{"a":True}',
  '{"a":NULL}',
  '{"a":t}',
  '{"a":1,}',
  '[1,]',
  '{,}',
  '{"a" 1}',
  '{"a":1 "b":2}',
  '{"a":[1 2]}',
  '{"a":[1,,2]}',
  '{a:1}',
  "{'a':1}",
  '{"a":1]',
  '{"a":[1}',
  '{"a":{]}',
  '{"a":[]}',
  '{"a":{}}',
  '{"a":[[]]}',
  '{"a":[{}]}',
  '{"a":"x"}\u00a0',
  '{"a"\u00a0:1}',
  '{"a":1}\u2028',
  '\u000b{}',
  '{}\f',
  '{"a":1,"a":2}',
  '{"__proto__":1}',
  '{"__proto__":{"a":1}}',
  '{"a":{"__proto__":[1]}}',
  '{"":""}',
  '{"a":""}',
]

/** Edge cases that are bytes, not text: BOMs, invalid and truncated UTF-8. */
export const SPECIAL_BYTES = [
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // BOM
  Buffer.from('{"a":"\xff\xfe\x80\xc0\xa2"}', 'latin1'), // invalid UTF-8 inside a string: U+FFFD, valid
  Buffer.from('{"a":"\xe4\xb8"}', 'latin1'), // a truncated sequence before the quote
  Buffer.from('{"a":\xff}', 'latin1'),
  Buffer.from('{"\xf0\x9f":1}', 'latin1'),
  Buffer.from('{"a":1}\xc2\xa0', 'latin1'),
  Buffer.from('{"a":"\xc0\xa2}', 'latin1'), // an overlong quote is not a quote
  Buffer.from([]),
]
