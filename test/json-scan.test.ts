import { describe, expect, it } from 'vitest'
import { GatewayError } from '../src/errors.js'
import { BIG_STRING, scanJsonObject } from '../src/json-scan.js'
import { validateChat, validateGenerateContent } from '../src/validate.js'

// ---------------------------------------------------------------------------------------------------------------
// Seeded generator of JSON texts (written by hand, not by JSON.stringify, to vary whitespace, escapes and numbers)

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class Gen {
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
  'a', 'hello', 'world ', ' ', 'x y z', '0', '"', // '"' is escaped below
  '\\n', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\t', '\\u00e9', '\\u00E9', '\\uD83D\\uDE00', '\\ud800', '\\uDFFF', '\\u0000', '\\u001F',
  'é', 'ü', '中文', '这是测试', '😀', '🎉x', '\u007f', '\u2028', '\u00a0', 'ключ',
]

function ws(g: Gen): string {
  if (g.chance(0.7)) return ''
  let s = ''
  for (let k = 1 + g.int(3); k > 0; k--) s += g.pick([' ', '\t', '\n', '\r', '  '])
  return s
}

function stringText(g: Gen, long = false): string {
  let s = '"'
  const pieces = long ? 20 + g.int(60) : g.int(6)
  for (let k = 0; k < pieces; k++) {
    const piece = g.pick(STRING_PIECES)
    s += piece === '"' ? '\\"' : piece
  }
  return s + '"'
}

function digits(g: Gen, count: number): string {
  let s = ''
  for (let k = 0; k < count; k++) s += String(g.int(10))
  return s
}

function numberText(g: Gen): string {
  let s = g.chance(0.3) ? '-' : ''
  s += g.chance(0.3) ? '0' : String(1 + g.int(9)) + digits(g, g.int(g.chance(0.1) ? 40 : 4))
  if (g.chance(0.3)) s += '.' + digits(g, 1 + g.int(g.chance(0.1) ? 30 : 4))
  if (g.chance(0.25)) s += g.pick(['e', 'E']) + g.pick(['', '+', '-']) + digits(g, 1 + g.int(3))
  if (g.chance(0.02)) s = (g.chance(0.5) ? '-' : '') + String(1 + g.int(9)) + digits(g, 900 + g.int(300)) + '.' + digits(g, g.int(900)) + 'e-' + String(g.int(1200))
  return s
}

const KEYS = ['a', 'b', 'role', 'content', 'model', '__proto__', 'é', '', 'k\\u0041', 'x y', 'parts', 'text']

function valueText(g: Gen, depth: number): string {
  const kind = depth > 5 ? 4 + g.int(6) : g.int(10)
  switch (kind) {
    case 0:
    case 1: {
      const members: string[] = []
      for (let k = g.int(5); k > 0; k--) members.push(`${ws(g)}${g.chance(0.6) ? `"${g.pick(KEYS)}"` : stringText(g)}${ws(g)}:${ws(g)}${valueText(g, depth + 1)}${ws(g)}`)
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
  if (r === 0) return g.pick(['null', '"user"', '12', '[]', '[{"role":"user"}]', stringText(g, true), '[' + stringText(g, true) + ']'])
  const members: string[] = []
  const role = g.pick([
    '"user"', '"assistant"', '"system"', '""', stringText(g, true), '1', 'null', 'true', '{"a":1}', `{"text":${stringText(g, true)}}`, '[]', '["user"]', 'MISSING',
  ])
  if (role !== 'MISSING') members.push(`"role":${role}`)
  if (g.chance(0.8)) members.push(`"content":${g.chance(0.6) ? stringText(g, true) : valueText(g, 2)}`)
  if (g.chance(0.2)) members.push(`"name":${stringText(g)}`)
  if (g.chance(0.15)) members.push(`"role":${g.pick(['"tool"', '{"big":' + stringText(g, true) + '}', '5', stringText(g, true), '[' + stringText(g, true) + ']'])}`) // duplicate
  if (g.chance(0.1)) members.push(`"__proto__":${g.pick(['{"role":"user"}', '"x"', '{}', `{"role":${stringText(g, true)}}`])}`)
  if (g.chance(0.2)) members.push(`"${g.pick(KEYS)}":${valueText(g, 2)}`)
  return objectText(shuffle(g, members), g)
}

function chatText(g: Gen): string {
  // Half the documents are close to valid, so that checks late in validateChat are reached too.
  const nearlyValid = g.chance(0.5)
  const bad = () => !nearlyValid || g.chance(0.12)
  const members: string[] = []
  const model = bad() ? g.pick(['"gpt-4o"', '"m"', '""', stringText(g, true), '1', 'null', '{"name":"gpt"}', '["gpt"]', 'MISSING']) : g.pick(['"gpt-4o"', stringText(g, true)])
  if (model !== 'MISSING') members.push(`"model":${model}`)
  const messages = bad() ? g.int(10) : 2
  if (messages < 7) {
    const items: string[] = []
    for (let k = g.int(messages === 0 ? 1 : 6); k >= 0; k--) items.push(bad() ? messageText(g) : objectText([`"role":"${g.pick(['user', 'assistant'])}"`, `"content":${stringText(g, g.chance(0.5))}`], g))
    if (messages === 1) items.length = 0
    members.push(`"messages":[${items.join(',')}${ws(g)}]`)
  } else if (messages < 9) {
    members.push(`"messages":${g.pick(['null', '{}', '{"0":{"role":"user"}}', stringText(g, true), '[]', '{"role":"user","content":' + stringText(g, true) + '}'])}`)
  }
  // [name, valid spellings, invalid spellings]
  const scalars: Array<[string, string[], string[]]> = [
    ['stream', ['true', 'false', 'null'], ['"yes"', '1', '0', '{}', '[]']],
    ['temperature', ['0.7', '0', '2', '2.0000000000000001', '-0', '1' + '0'.repeat(1000) + 'e-1000', '0.00000000000000000000000000000001e32', 'null'], ['2.5', '-1', '"1"', '1e400', '[1]']],
    ['top_p', ['1', '0.5', '-0.0', '1.00000000000000001'], ['1.0000001', '2', 'true', '"0.5"']],
    ['presence_penalty', ['-2', '2', '0', '1E0', '1e-400'], ['-2.01', '3', '"x"']],
    ['frequency_penalty', ['1.5', '-0.5'], ['3', '"x"', '{}']],
    ['n', ['1', '3', '9007199254740991', '1e0', '10E-1'], ['0', '1.5', '9007199254740993', '-1', '"2"', '100000000000000000000']],
    ['max_tokens', ['100', '1.0', '1e3', 'null'], ['0', '2.5', '{}']],
    ['max_completion_tokens', ['1', '3.0e0'], ['-5', '"10"', '1e400']],
  ]
  for (const [name, good, wrong] of scalars) if (g.chance(0.4)) members.push(`"${name}":${g.pick(bad() ? wrong : good)}`)
  for (let k = g.int(3); k > 0; k--) members.push(`${g.chance(0.7) ? `"${g.pick(KEYS)}"` : stringText(g)}:${valueText(g, 1)}`)
  if (g.chance(0.1)) members.push(`"model":${g.pick(['"gpt-4o"', '""', '3', stringText(g, true), '{"x":' + stringText(g, true) + '}'])}`) // duplicate
  if (g.chance(0.05)) members.push(`"messages":${g.pick(['null', '[{"role":"user"}]', '[' + messageText(g) + ']'])}`) // duplicate
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
          ? objectText([`"role":"${g.pick(['user', 'model'])}"`, `"parts":[{"text":${stringText(g, g.chance(0.6))}}]`].slice(0, 1 + g.int(2)), g)
          : g.pick(['null', '1', '"text"', '[]', '[{"parts":[]}]', stringText(g, true), '[' + stringText(g, true) + ']']),
      )
    }
    if (r === 1) items.length = 0
    members.push(`"contents":[${items.join(',')}]`)
  } else if (r < 9) {
    members.push(`"contents":${g.pick(['null', '{}', '"x"', '{"parts":[{"text":' + stringText(g, true) + '}]}'])}`)
  }
  if (g.chance(0.5)) members.push(`"generationConfig":{"temperature":${numberText(g)},"stopSequences":[${stringText(g)}]}`)
  if (g.chance(0.3)) members.push(`"systemInstruction":{"parts":[{"text":${stringText(g, true)}}]}`)
  if (g.chance(0.05)) members.push(`"contents":[{"role":"user"}]`)
  return objectText(shuffle(g, members), g)
}

function documentText(g: Gen): string {
  const r = g.int(10)
  if (r < 4) return chatText(g)
  if (r < 6) return geminiText(g)
  if (r < 9) return `${ws(g)}${valueText(g, 0)}${ws(g)}`
  return objectText([`"a":${valueText(g, 1)}`], g)
}

const INTERESTING_BYTES = Buffer.from('{}[]":,.-+0123456789eEtfnu\\ \t\n\r\x00\x01\x1f\x7f/xa', 'latin1')

function mutate(g: Gen, bytes: Buffer): Buffer {
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

const SPECIAL_TEXTS = [
  '', ' ', ' \n\t\r ', '\ufeff{}', '\ufeff', '{}', ' {} ', '{}x', '{}}', '{} {}', '[]', '"x"', '1', '-0', 'null', 'true', '[1,', '[1]',
  '{"a":01}', '{"a":00}', '{"a":-01}', '{"a":1.}', '{"a":1.e5}', '{"a":.5}', '{"a":+1}', '{"a":-}', '{"a":-a}', '{"a":1e}', '{"a":1e+}', '{"a":1E-}',
  '{"a":1e5}', '{"a":1E+05}', '{"a":-0.0e-0}', '{"a":0.5}', '{"a":NaN}', '{"a":Infinity}', '{"a":-Infinity}', '{"a":0x10}',
  '{"a":"\\x"}', '{"a":"\\u12G4"}', '{"a":"\\u12"}', '{"a":"\\u"}', '{"a":"\\U0041"}', '{"a":"\\a"}', '{"a":"\\\'"}', '{"a":"\\/"}', '{"a":"\\"}',
  '{"a":"a\nb"}', '{"a":"\t"}', '{"a":"\u0001"}', '{"a":"\u001f"}', '{"a":"\u0000"}', '{"a":"\u007f"}', '{"a":"\u2028\u2029"}',
  '{"a":"\\ud800"}', '{"a":"\\udc00\\ud800"}', '{"a":"\\uDBFF\\uDFFF"}', '{"\\u0000":1}', '{"\\ud800":1,"\\ud800":2}',
  '{"a":tru}', '{"a":nul}', '{"a":fals}', '{"a":truex}', '{"a":nulll}', '{"a":True}', '{"a":NULL}', '{"a":t}',
  '{"a":1,}', '[1,]', '{,}', '{"a" 1}', '{"a":1 "b":2}', '{"a":[1 2]}', '{"a":[1,,2]}', '{a:1}', "{'a':1}", '{"a":1]', '{"a":[1}', '{"a":{]}',
  '{"a":[]}', '{"a":{}}', '{"a":[[]]}', '{"a":[{}]}', '{"a":"x"}\u00a0', '{"a"\u00a0:1}', '{"a":1}\u2028', '\u000b{}', '{}\f',
  '{"a":1,"a":2}', '{"__proto__":1}', '{"__proto__":{"a":1}}', '{"a":{"__proto__":[1]}}', '{"":""}', '{"a":""}',
]

const SPECIAL_BYTES = [
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // BOM
  Buffer.from('{"a":"\xff\xfe\x80\xc0\xa2"}', 'latin1'), // invalid UTF-8 inside a string: U+FFFD, valid
  Buffer.from('{"a":"\xe4\xb8"}', 'latin1'), // a truncated sequence before the quote
  Buffer.from('{"a":\xff}', 'latin1'),
  Buffer.from('{"\xf0\x9f":1}', 'latin1'),
  Buffer.from('{"a":1}\xc2\xa0', 'latin1'),
  Buffer.from('{"a":"\xc0\xa2}', 'latin1'), // an overlong quote is not a quote
  Buffer.from([]),
]

// ---------------------------------------------------------------------------------------------------------------
// Agreement checks

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; param: string | undefined; message: string }

function outcomeOf(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    return { ok: false, code: error.code, param: error.param, message: error.message }
  }
}

async function scanOutcome(bytes: Buffer, options?: { sliceBytes?: number; smallValueBytes?: number }): Promise<Outcome> {
  try {
    return { ok: true, value: await scanJsonObject(bytes, options) }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    return { ok: false, code: error.code, param: error.param, message: error.message }
  }
}

/** JSON text that tells -0 from 0 and keeps key order. */
function exact(value: unknown): string {
  return JSON.stringify(value, (_key, x: unknown) => (Object.is(x, -0) ? '<-0>' : x))
}

const outcomes = { chatPass: 0, geminiPass: 0, params: new Set<string>(), skeletons: 0, bigStrings: 0, rejected: 0, notObject: 0 }

function sameValidation(skeleton: Record<string, unknown>, parsed: Record<string, unknown>, label: string): void {
  const chatParsed = outcomeOf(() => validateChat(parsed))
  const chatSkeleton = outcomeOf(() => validateChat(skeleton))
  if (chatParsed.ok && chatSkeleton.ok) {
    const a = chatParsed.value as { model: string; stream: boolean }
    const b = chatSkeleton.value as { model: string; stream: boolean }
    expect(b.stream, label).toBe(a.stream)
    if (b.model === BIG_STRING) {
      // The one value a skeleton cannot give back: a model name bigger than smallValueBytes.
      expect(a.model.length, label).toBeGreaterThan(0)
      outcomes.bigStrings++
    } else {
      expect(b.model, label).toBe(a.model)
    }
    outcomes.chatPass++
  } else {
    expect(chatSkeleton, label).toEqual(chatParsed)
    if (!chatParsed.ok) outcomes.params.add(String(chatParsed.param).replace(/\[\d+\]/, '[i]'))
  }
  const geminiParsed = outcomeOf(() => validateGenerateContent(parsed))
  expect(outcomeOf(() => validateGenerateContent(skeleton)), label).toEqual(geminiParsed)
  if (geminiParsed.ok) outcomes.geminiPass++
  else outcomes.params.add(String(geminiParsed.param).replace(/\[\d+\]/, '[i]'))
}

async function checkDocument(bytes: Buffer): Promise<void> {
  const label = JSON.stringify(bytes.toString('latin1').slice(0, 400))
  let parsed: unknown
  let valid = true
  try {
    parsed = JSON.parse(bytes.toString('utf8'))
  } catch {
    valid = false
  }
  // Slices of 7 bytes put a boundary inside every token and multi-byte character sooner or later.
  const tiny = await scanOutcome(bytes, { sliceBytes: 7, smallValueBytes: 8 })
  if (!valid) {
    outcomes.rejected++
    expect(tiny.ok, label).toBe(false)
    if (tiny.ok) return
    expect(tiny.code, label).toBe('invalid_request')
    expect(tiny.message, label).toMatch(/^The request body is not valid JSON: .+ at byte \d+\.$/)
    const offset = Number(/at byte (\d+)\.$/.exec(tiny.message)?.[1])
    expect(offset, label).toBeLessThanOrEqual(bytes.length)
    // The slicing does not change the answer.
    expect(await scanOutcome(bytes), label).toEqual(tiny)
    return
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    outcomes.notObject++
    expect(tiny, label).toEqual({ ok: false, code: 'invalid_request', param: undefined, message: 'The request body must be a JSON object.' })
    return
  }
  const object = parsed as Record<string, unknown>
  expect(tiny.ok, label).toBe(true)
  if (!tiny.ok) return
  outcomes.skeletons++
  sameValidation(tiny.value as Record<string, unknown>, object, label)
  // With nothing big, the skeleton is the parsed value (key order, -0 and own '__proto__' included).
  const whole = (await scanJsonObject(bytes, { sliceBytes: 7, smallValueBytes: 1e9 })) as Record<string, unknown>
  expect(whole, label).toEqual(object)
  expect(exact(whole), label).toBe(exact(object))
  expect(Object.getPrototypeOf(whole), label).toBe(Object.prototype)
  const defaults = (await scanJsonObject(bytes)) as Record<string, unknown>
  expect(exact(defaults), label).toBe(exact(object))
  sameValidation((await scanJsonObject(bytes, { smallValueBytes: 0 })) as Record<string, unknown>, object, label)
  sameValidation((await scanJsonObject(bytes, { sliceBytes: 3, smallValueBytes: 40 })) as Record<string, unknown>, object, label)
}

// ---------------------------------------------------------------------------------------------------------------

describe('scanJsonObject', () => {
  it('agrees with JSON.parse and validation on a seeded corpus, mutations and edge cases, in 7-byte slices', async () => {
    const g = new Gen(20240611)
    let documents = 0
    const check = async (bytes: Buffer) => {
      documents++
      await checkDocument(bytes)
    }
    for (const text of SPECIAL_TEXTS) await check(Buffer.from(text, 'utf8'))
    for (const bytes of SPECIAL_BYTES) await check(bytes)
    for (let k = 0; k < 3000; k++) {
      const bytes = Buffer.from(documentText(g), 'utf8')
      await check(bytes)
      for (let m = g.int(3); m >= 0; m--) await check(mutate(g, bytes))
      if (g.chance(0.1)) await check(mutate(g, mutate(g, bytes)))
    }
    expect(documents).toBeGreaterThan(7000)
    // The corpus reaches every branch that matters: passes, each failing field, big values, every error kind.
    expect(outcomes.chatPass).toBeGreaterThan(100)
    expect(outcomes.geminiPass).toBeGreaterThan(100)
    expect(outcomes.bigStrings).toBeGreaterThan(10)
    expect(outcomes.rejected).toBeGreaterThan(2000)
    expect(outcomes.notObject).toBeGreaterThan(100)
    for (const param of ['model', 'messages', 'messages[i]', 'messages[i].role', 'stream', 'temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'n', 'max_tokens', 'max_completion_tokens', 'contents', 'contents[i]']) {
      expect([...outcomes.params], param).toContain(param)
    }
  })

  it('gives the errors of parseJsonObject, naming the reason and the byte', async () => {
    const cases: Array<[string, string]> = [
      ['', 'unexpected end of input at byte 0'],
      ['  ', 'unexpected end of input at byte 2'],
      ['{"a":01}', "expected ',' or '}', found '1' at byte 6"],
      ['{"a":1.}', "expected a digit after '.', found '}' at byte 7"],
      ['{"a":"\\x"}', "bad escape 'x' in a string at byte 7"],
      ['{"a":"\\u12G4"}', "bad \\u escape: 'G' is not a hex digit at byte 10"],
      ['{"a":"\n"}', 'unescaped control character byte 0x0a in a string at byte 6'],
      ['{"a":1} x', 'unexpected data after the JSON value at byte 8'],
      ['{"a":tru}', "unexpected '}' at byte 8"],
      ['{"a":1,}', "expected a string key, found '}' at byte 7"],
      ['\ufeff{}', 'unexpected byte 0xef at byte 0'],
      ['[1,', 'unexpected end of input at byte 3'],
    ]
    for (const [text, reason] of cases) {
      await expect(scanJsonObject(Buffer.from(text, 'utf8'))).rejects.toThrow(`The request body is not valid JSON: ${reason}.`)
    }
    for (const text of ['[]', '[1]', '"{}"', '1', 'null', 'true', ' [{"model":"x"}] ']) {
      const error = await scanJsonObject(Buffer.from(text)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(GatewayError)
      expect((error as GatewayError).code).toBe('invalid_request')
      expect((error as GatewayError).message).toBe('The request body must be a JSON object.')
    }
  })

  it('accepts nesting 100 000 levels deep, arrays and objects, without recursion', async () => {
    const depth = 100_000
    const arrays = Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth)},"model":"m"}`)
    const skeleton = await scanJsonObject(arrays)
    expect(skeleton).toEqual({ a: [[]], model: 'm' })
    const objects = Buffer.from(`{"a":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`)
    expect(await scanJsonObject(objects)).toEqual({ a: {} })
    const mixed = Buffer.from(`{"a":${'[{"b":'.repeat(depth)}null${'}]'.repeat(depth)}}`)
    expect(await scanJsonObject(mixed, { smallValueBytes: 8 })).toEqual({ a: [{}] })
    // Exact (parsed) where the deep value is small enough.
    const small = Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`)
    const exactDeep = await scanJsonObject(small, { smallValueBytes: 1e9, sliceBytes: 4096 })
    let cursor: unknown = exactDeep.a
    let levels = 0
    while (Array.isArray(cursor) && cursor.length > 0) {
      cursor = cursor[0]
      levels++
    }
    expect(levels).toBe(depth - 1)
    // Deep but invalid or not an object.
    await expect(scanJsonObject(Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth - 1)}}`))).rejects.toThrow(/not valid JSON: expected ',' or ']', found '}'/)
    await expect(scanJsonObject(Buffer.from('['.repeat(depth) + ']'.repeat(depth)))).rejects.toThrow('The request body must be a JSON object.')
    await expect(scanJsonObject(Buffer.from('{"a":' + '['.repeat(depth)))).rejects.toThrow(`unexpected end of input at byte ${depth + 5}.`)
  })

  it('yields to the event loop between slices of a 20 MB body', async () => {
    const content = 'Lorem ipsum dolor sit amet, 这是一个测试 😀 \\"quoted\\" \\n '.repeat(7000)
    const messages: string[] = []
    while (messages.length * content.length < 20 * 1024 * 1024) messages.push(`{"role":"user","content":"${content}"}`)
    const body = Buffer.from(`{"model":"gpt-4o","stream":true,"messages":[${messages.join(',')}],"temperature":0.5}`)
    expect(body.length).toBeGreaterThan(20 * 1024 * 1024)
    let fired = false
    setImmediate(() => {
      fired = true
    })
    let ticks = 0
    let scanning = true
    const tick = () => {
      ticks++
      if (scanning) setImmediate(tick)
    }
    setImmediate(tick)
    const skeleton = await scanJsonObject(body)
    scanning = false
    expect(fired).toBe(true)
    // One turn of the loop per 256 KiB slice at least (ticks counted, not time).
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(body.length / (256 * 1024)) - 1)
    expect(validateChat(skeleton)).toEqual({ model: 'gpt-4o', stream: true })
    expect(skeleton.temperature).toBe(0.5)
    const list = skeleton.messages as Array<Record<string, unknown>>
    expect(list).toHaveLength(messages.length)
    expect(list[0]).toEqual({ role: 'user', content: BIG_STRING })

    // A body within one slice is scanned without a turn of the loop.
    let early = false
    setImmediate(() => {
      early = true
    })
    await scanJsonObject(Buffer.from('{"model":"m","messages":[{"role":"user"}]}'))
    expect(early).toBe(false)
  })

  it('makes a top-level __proto__ an own property, as JSON.parse does', async () => {
    for (const small of [8, 1e9]) {
      const skeleton = await scanJsonObject(Buffer.from('{"__proto__":{"model":"evil","x":"a long string here"},"y":1}'), { smallValueBytes: small })
      expect(Object.getPrototypeOf(skeleton)).toBe(Object.prototype)
      expect(Object.hasOwn(skeleton, '__proto__')).toBe(true)
      expect(Object.keys(skeleton)).toEqual(['__proto__', 'y'])
      expect(skeleton.model).toBeUndefined()
      expect((skeleton as { x?: unknown }).x).toBeUndefined()
    }
    const text = '{"messages":[{"__proto__":{"r":1},"content":"a long string here"}]}'
    const messages = await scanJsonObject(Buffer.from(text), { smallValueBytes: 8 })
    const first = (messages.messages as object[])[0] as Record<string, unknown>
    expect(Object.hasOwn(first, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(first)).toBe(Object.prototype)
    expect(first.r).toBeUndefined()
    expect(first.content).toBe(BIG_STRING)
    expect(() => validateChat({ model: 'm', ...messages })).toThrow("'messages[0].role' must be a string.")
    expect(first.content).toBe(BIG_STRING)
  })

  it('lets the last duplicate key win, also when an earlier or later value is big', async () => {
    const big = `"${'x'.repeat(100)}"`
    const cases = [
      '{"model":"a","model":"b"}',
      `{"model":"a","model":${big}}`,
      `{"model":${big},"model":"b"}`,
      `{"messages":[{"role":"user","role":{"a":${big}}}]}`,
      `{"messages":[{"role":{"a":${big}},"role":"user"}]}`,
      `{"messages":[{"role":[${big}],"content":${big},"role":"user"}]}`,
      `{"messages":[{"role":"user","content":${big}}],"messages":"none"}`,
      `{"messages":"none","messages":[{"role":"user","content":${big}}]}`,
      `{"x":{"a":1,"a":{"b":${big}}}}`,
      `{"x":{"a":{"b":${big}},"a":2}}`,
    ]
    for (const text of cases) {
      const parsed = JSON.parse(text) as Record<string, unknown>
      for (const small of [8, 50, 1e9]) {
        const skeleton = await scanJsonObject(Buffer.from(text), { smallValueBytes: small })
        sameValidation(skeleton, parsed, `${text} ${small}`)
        if (small === 1e9) expect(exact(skeleton)).toBe(exact(parsed))
      }
    }
    expect((await scanJsonObject(Buffer.from(`{"model":"a","model":${big}}`), { smallValueBytes: 8 })).model).toBe(BIG_STRING)
    expect(await scanJsonObject(Buffer.from(`{"x":{"a":1,"a":{"b":${big}}}}`), { smallValueBytes: 8 })).toEqual({ x: {} })
    expect(await scanJsonObject(Buffer.from(`{"x":{"a":{"b":${big}},"a":2}}`), { smallValueBytes: 8 })).toEqual({ x: { a: 2 } })
  })

  it('leaves out members whose key is longer than 64 KiB, unless smallValueBytes is larger', async () => {
    const long = 'k'.repeat(70_000)
    const text = `{"model":"m","${long}":1,"messages":[{"${long}":2,"role":"user"}],"x":{"${long}":[3],"y":"${'z'.repeat(70_000)}"}}`
    const skeleton = await scanJsonObject(Buffer.from(text))
    expect(skeleton).toEqual({ model: 'm', messages: [{ role: 'user' }], x: { y: BIG_STRING } })
    expect(validateChat(skeleton)).toEqual({ model: 'm', stream: false })
    expect(exact(await scanJsonObject(Buffer.from(text), { smallValueBytes: 1e9, sliceBytes: 1000 }))).toBe(exact(JSON.parse(text)))
  })

  it('builds the skeleton: small values parsed, big strings marked, big arrays and objects reduced', async () => {
    const big = `"${'y'.repeat(40)}"`
    const text = `{
      "model": "gpt",
      "prompt": ${big},
      "messages": [
        {"role": "user", "content": ${big}, "parts": [${big}], "meta": {"k": 1}, "n": 12345678901234},
        [1, 2, 3, 4, 5, 6, 7],
        [1],
        ${big},
        "short",
        3.25,
        null,
        {"role": "tool"}
      ],
      "options": {"a": ${big}, "b": [1, 2, 3, 4, 5, 6, 7, 8], "c": {"d": 1, "e": 2}, "f": true, "g": 1.5e300},
      "seed": 12345678901234567890
    }`
    const skeleton = await scanJsonObject(Buffer.from(text), { smallValueBytes: 12 })
    expect(skeleton).toEqual({
      model: 'gpt',
      prompt: BIG_STRING,
      messages: [{ role: 'user', content: BIG_STRING, meta: { k: 1 }, n: 12345678901234 }, [], [1], BIG_STRING, 'short', 3.25, null, { role: 'tool' }],
      options: { a: BIG_STRING, f: true, g: 1.5e300 },
      seed: 12345678901234567890,
    })
  })

  it('reads numbers of any length exactly as JSON.parse does', async () => {
    const g = new Gen(77)
    const texts = [
      '0', '-0', '-0.0', '0e5', '-0.000e-7', '1', '-1', '1e400', '-1e400', '1e-400', '4.9e-324', '2.4e-324', '2.5e-324', '1.7976931348623157e308',
      '1.7976931348623158e308', '1.7976931348623159e308', '9007199254740993', '9007199254740993' + '0'.repeat(1000) + '1e-1001',
      '9007199254740993' + '0'.repeat(1000) + 'e-1000', '9007199254740992' + '9'.repeat(900), '1' + '0'.repeat(5000) + 'e-5000',
      '0.' + '0'.repeat(5000) + '1e5001', '1e0000000000000000000000000000000000001', '1e-0000000000000000000000000000000000001',
      '1e99999999999999999999', '1e-99999999999999999999', '0e99999999999999999999', '123456789012345678901234567890.123456789e-20',
    ]
    for (let k = 0; k < 2000; k++) texts.push(numberText(g))
    for (const number of texts) {
      const skeleton = await scanJsonObject(Buffer.from(`{"n":${number},"m":[${number}],"o":{"p":${number}}}`), { smallValueBytes: 5 })
      const expected = JSON.parse(number) as number
      expect(Object.is(skeleton.n, expected), number).toBe(true)
      expect(Object.is((skeleton.m as number[])[0], expected), number).toBe(true)
      expect(Object.is((skeleton.o as { p: number }).p, expected), number).toBe(true)
    }
  })

  it('reads multi-byte characters split across every slice boundary', async () => {
    const text = `{"model":"模型😀","messages":[{"role":"用户","content":"é中😀\\u00e9\\ud83d\\ude00"}],"ключ":["ü","\u2028"],"😀":{"€":"𝄞"}}`
    const parsed = JSON.parse(text) as Record<string, unknown>
    const bytes = Buffer.from(text)
    for (let slice = 1; slice <= 13; slice++) {
      expect(exact(await scanJsonObject(bytes, { sliceBytes: slice, smallValueBytes: 1e9 }))).toBe(exact(parsed))
      for (const small of [5, 8, 16, 32]) sameValidation(await scanJsonObject(bytes, { sliceBytes: slice, smallValueBytes: small }), parsed, `${slice} ${small}`)
    }
  })
})
