import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../../bench/lib/random.mjs'
import { isGatewayError } from '../../src/errors.js'
import { canonicalBodyPieces, canonicalJson, hashCanonical, requestBodyHash } from '../../src/json/hash.js'

// The obviously-correct definition the fast implementation must match: recursive, no tricks.
function reference(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${keys.map((key) => `${JSON.stringify(key)}:${reference(record[key])}`).join(',')}}`
}

function sha16(text: string): string {
  return createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex').slice(0, 16)
}

// A JSON document as a tree whose leaves list equivalent spellings, so one value can be printed
// with different key orders, whitespace, number forms and string escapes.
type Tree = { kind: 'lit'; spellings: string[] } | { kind: 'arr'; items: Tree[] } | { kind: 'obj'; entries: [string, Tree][] }

const KEY_POOL = [
  'a',
  'b',
  'B',
  'model',
  'messages',
  'role',
  'content',
  'n',
  '',
  ' ',
  'a b',
  'é',
  'Z',
  '0',
  '1',
  '2',
  '9',
  '10',
  '11',
  '100',
  '007',
  '-1',
  '1.5',
  '4294967294',
  '4294967295',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '\uD83D\uDE00',
  '\uFF61',
  '\uE000',
  '\uD800',
  '\uDC00',
  '证明',
  'ключ',
  'quote"key',
  'back\\slash',
  'tab\tkey',
  'nl\nkey',
  '\u0000',
  '\u001f',
  '\u007f',
]
const STRING_POOL = [
  '',
  'hi',
  ' ',
  'hello world',
  '证明费马大定理.',
  '\uD83D\uDE00 emoji',
  'lone \uD800 high',
  'lone \uDC00 low',
  '\uDC00\uD800 reversed',
  '"quoted"',
  'C:\\path\\',
  'line\nbreak\r\n\ttab',
  '\u0000\u0001\u0008\u000b\u000c\u001f',
  '\u007f\u0080\u00ff\u2028\u2029',
  '</script>',
  '\uFEFF bom',
  'é'.normalize('NFD'),
]
const NUMBER_POOL: [number, string[]][] = [
  [0, ['0', '-0', '0.0', '0e5']],
  [1, ['1', '1.0', '1e0', '10e-1', '0.1e1']],
  [-1, ['-1', '-1.00']],
  [1e21, ['1e21', '1E21', '1e+21', '1000000000000000000000']],
  [1.5e-7, ['1.5e-7', '0.00000015', '15e-8']],
  [123456789012, ['123456789012', '1.23456789012e11']],
  [0.1, ['0.1', '1e-1']],
  [-2.5, ['-2.5', '-25e-1']],
  // biome-ignore lint/correctness/noPrecisionLoss: the point of the case is a literal a double cannot hold
  [9007199254740993, ['9007199254740993']],
  [1e-7, ['1e-7', '0.0000001']],
  [5e-324, ['5e-324']],
  [1.7976931348623157e308, ['1.7976931348623157e308']],
]

function escapeAll(text: string): string {
  let out = '"'
  for (let i = 0; i < text.length; i++) out += `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`
  return `${out}"`
}

function stringSpellings(text: string): string[] {
  return [JSON.stringify(text), escapeAll(text)]
}

function genTree(rng: () => number, depth: number): Tree {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T
  const roll = rng()
  if (depth > 0 && roll < 0.25) {
    const items: Tree[] = []
    const n = Math.floor(rng() * 5)
    for (let i = 0; i < n; i++) items.push(genTree(rng, depth - 1))
    return { kind: 'arr', items }
  }
  if (depth > 0 && roll < 0.55) {
    const entries: [string, Tree][] = []
    const used = new Set<string>()
    const n = Math.floor(rng() * 7)
    for (let i = 0; i < n; i++) {
      const key = pick(KEY_POOL)
      if (used.has(key)) continue
      used.add(key)
      entries.push([key, genTree(rng, depth - 1)])
    }
    return { kind: 'obj', entries }
  }
  const leaf = rng()
  if (leaf < 0.4) return { kind: 'lit', spellings: stringSpellings(pick(STRING_POOL)) }
  if (leaf < 0.6) {
    const [, spellings] = pick(NUMBER_POOL)
    return { kind: 'lit', spellings }
  }
  if (leaf < 0.75) {
    const n = Math.floor((rng() - 0.5) * 1e6) / 64
    return { kind: 'lit', spellings: [String(n)] }
  }
  return { kind: 'lit', spellings: [pick(['true', 'false', 'null'])] }
}

function print(tree: Tree, rng: () => number): string {
  const ws = (): string => ['', '', ' ', '\n  ', '\t', '\r\n'][Math.floor(rng() * 6)] as string
  switch (tree.kind) {
    case 'lit':
      return tree.spellings[Math.floor(rng() * tree.spellings.length)] as string
    case 'arr':
      return `[${ws()}${tree.items.map((item) => print(item, rng)).join(`${ws()},${ws()}`)}${ws()}]`
    case 'obj': {
      const entries = [...tree.entries]
      for (let i = entries.length - 1; i > 0; i--) {
        const j = Math.floor(rng() * (i + 1))
        ;[entries[i], entries[j]] = [entries[j] as [string, Tree], entries[i] as [string, Tree]]
      }
      const keyText = (key: string): string => (rng() < 0.5 ? JSON.stringify(key) : escapeAll(key))
      return `{${ws()}${entries.map(([key, value]) => `${keyText(key) + ws()}:${ws()}${print(value, rng)}`).join(`,${ws()}`)}${ws()}}`
    }
  }
}

function deepArrays(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

function deepObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

describe('requestBodyHash', () => {
  const vector = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"证明费马大定理."}],"stream":false}'

  it('matches the documented test vector', () => {
    expect(requestBodyHash(vector)).toBe('6ded87ad1c72779a')
    expect(requestBodyHash(JSON.parse(vector) as object)).toBe('6ded87ad1c72779a')
    expect(requestBodyHash(Buffer.from(vector, 'utf8'))).toBe('6ded87ad1c72779a')
  })

  it('ignores whitespace, indentation, line breaks and key order', () => {
    const variants = [
      JSON.stringify(JSON.parse(vector), null, 2),
      JSON.stringify(JSON.parse(vector), null, '\t'),
      '{ "stream" : false ,\r\n "messages" : [ { "content" : "证明费马大定理.", "role" : "user" } ],\n"model":"gpt-4o-mini" }',
      '{"stream":false,"model":"gpt-4o-mini","messages":[{"content":"\\u8bc1\\u660e费马大定理.","role":"user"}]}',
    ]
    for (const text of variants) expect(requestBodyHash(text)).toBe('6ded87ad1c72779a')
  })

  it('changes with a value, an added or missing field, or array order', () => {
    const base = requestBodyHash(vector)
    const changed = [
      vector.replace('证明费马大定理.', '证明费马大定理. '),
      vector.replace('"stream":false', '"stream":true'),
      vector.replace('"stream":false', '"stream":false,"temperature":1'),
      vector.replace(',"stream":false', ''),
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}',
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"b"},{"role":"user","content":"a"}]}',
      vector.replace('false', '0'),
      vector.replace('false', 'null'),
    ]
    const hashes = changed.map((text) => requestBodyHash(text))
    expect(new Set([base, ...hashes]).size).toBe(changed.length + 1)
  })

  it('hashes bytes exactly as the same text', () => {
    const text = '{"b":"\uD83D\uDE00 证明","a":[1,2,{"c":"\\u0000"}]}'
    const expected = requestBodyHash(text)
    expect(requestBodyHash(Buffer.from(text, 'utf8'))).toBe(expected)
    expect(requestBodyHash(new TextEncoder().encode(text))).toBe(expected)
    // A view into a larger buffer must only read its own bytes.
    const padded = Buffer.from(`xxxx${text}yyyy`, 'utf8')
    expect(requestBodyHash(new Uint8Array(padded.buffer, padded.byteOffset + 4, padded.length - 8))).toBe(expected)
  })

  it('equals the truncated sha256 of the canonical form', () => {
    const value = JSON.parse(vector) as unknown
    expect(requestBodyHash(vector)).toBe(sha16(canonicalJson(value)))
    expect(hashCanonical(canonicalJson(value))).toBe('6ded87ad1c72779a')
    expect(requestBodyHash(vector)).toMatch(/^[0-9a-f]{16}$/)
  })

  it('throws invalid_request for text that is not JSON', () => {
    const bad: (string | Uint8Array)[] = [
      '',
      'not json',
      '{"a":1',
      '{"a":1}}',
      "{'a':1}",
      '{"a":undefined}',
      Buffer.from([0x7b, 0xff, 0x7d]),
      Buffer.from('\uFEFF{}', 'utf8'),
    ]
    for (const body of bad) {
      let caught: unknown
      try {
        requestBodyHash(body)
      } catch (error) {
        caught = error
      }
      expect(isGatewayError(caught), String(body)).toBe(true)
      expect((caught as { code: string }).code).toBe('invalid_request')
      expect((caught as { status: number }).status).toBe(400)
    }
  })

  it('leaves rejecting non-object bodies to the caller', () => {
    expect(requestBodyHash('[1,2]')).toBe(sha16('[1,2]'))
    expect(requestBodyHash('"x"')).toBe(sha16('"x"'))
  })

  it('hashes large bodies across chunk boundaries, surrogate pairs included', () => {
    for (const offset of [0, 1, 2, 3]) {
      const filler = 'x'.repeat(65536 - 7 - offset)
      const text = JSON.stringify({ a: `${filler + '\uD83D\uDE00'.repeat(4) + '证'.repeat(70000)}\uD800`, b: 'end' })
      const value = JSON.parse(text) as unknown
      expect(requestBodyHash(text)).toBe(sha16(reference(value)))
      const canonical = canonicalJson(value)
      expect(hashCanonical(canonical)).toBe(sha16(canonical))
    }
    const edge = `${'y'.repeat(65535)}\uD83D\uDE00${'z'.repeat(10)}`
    expect(hashCanonical(edge)).toBe(sha16(edge))
  })
})

describe('canonicalJson', () => {
  const canon = (text: string): string => canonicalJson(JSON.parse(text))

  it('sorts integer-like keys by code units, not numerically', () => {
    expect(canon('{"10":1,"9":2,"a":3}')).toBe('{"10":1,"9":2,"a":3}')
    expect(canon('{"b":1,"2":1,"10":1}')).toBe('{"10":1,"2":1,"b":1}')
    expect(canon('{"x":{"b":1,"2":1,"10":1,"007":0,"-1":0}}')).toBe('{"x":{"-1":0,"007":0,"10":1,"2":1,"b":1}}')
    expect(canon('[{"9":0,"10":0},{"10":0,"9":0}]')).toBe('[{"10":0,"9":0},{"10":0,"9":0}]')
  })

  it('keeps a __proto__ key, at the top and nested', () => {
    expect(canon('{"__proto__":{"x":1},"a":1}')).toBe('{"__proto__":{"x":1},"a":1}')
    expect(canon('{"m":[{"a":1},{"__proto__":{"x":1},"a":1}]}')).toBe('{"m":[{"a":1},{"__proto__":{"x":1},"a":1}]}')
    expect(canon('[{"b":{"__proto__":null}},{"c":2}]')).toBe('[{"b":{"__proto__":null}},{"c":2}]')
    expect(canon('{"z":{"__proto__":[1,{"__proto__":2}]}}')).toBe('{"z":{"__proto__":[1,{"__proto__":2}]}}')
  })

  it('keeps array order in nested arrays', () => {
    expect(canon('[[3,[2,[1]]],[],[[]],{"b":[{"d":1,"c":2}],"a":[]}]')).toBe('[[3,[2,[1]]],[],[[]],{"a":[],"b":[{"c":2,"d":1}]}]')
    expect(canon('{"a":[[{"b":2,"a":1}],[{"b":2,"a":1}]]}')).toBe('{"a":[[{"a":1,"b":2}],[{"a":1,"b":2}]]}')
  })

  it('sorts astral-plane keys by UTF-16 code units, not code points', () => {
    // U+1F600 is D83D DE00 in UTF-16: before U+FF61 by code units, after it by code points.
    expect(canon('{"\uFF61":1,"\uD83D\uDE00":2}')).toBe('{"\uD83D\uDE00":2,"\uFF61":1}')
    expect(canon('{"x":{"\uFF61":1,"\uD83D\uDE00":2,"\uE000":3,"a":4}}')).toBe('{"x":{"a":4,"\uD83D\uDE00":2,"\uE000":3,"\uFF61":1}}')
    expect(canon('{"é":1,"z":2,"证明":3,"ключ":4}')).toBe('{"z":2,"é":1,"ключ":4,"证明":3}')
  })

  it('prints numbers as JSON.stringify does', () => {
    expect(canon('[1.0,1e21,-0,1.5e-7,1E+2,0.1,-0.0,100e-2,123456789012345678901234567890]')).toBe(
      '[1,1e+21,0,1.5e-7,100,0.1,0,1,1.2345678901234568e+29]',
    )
    expect(canon('{"n":1.0,"m":-0}')).toBe('{"m":0,"n":1}')
  })

  it('escapes strings exactly as JSON.stringify does, non-ASCII left as is', () => {
    const strings = [...STRING_POOL, '\uD800', '\uDBFF\uDBFF', '\uDFFF', 'a\uD800b', '\u2028', '\\"\\']
    for (const text of strings) {
      expect(canonicalJson(text)).toBe(JSON.stringify(text))
      expect(canonicalJson({ [text]: text })).toBe(`{${JSON.stringify(text)}:${JSON.stringify(text)}}`)
      expect(canonicalJson([{ k: text }])).toBe(`[{"k":${JSON.stringify(text)}}]`)
    }
    expect(canonicalJson('证明 \uD83D\uDE00')).toBe('"证明 \uD83D\uDE00"')
    expect(canonicalJson('\uD800')).toBe('"\\ud800"')
  })

  it('handles scalars and empty containers at the top', () => {
    expect(canonicalJson(null)).toBe('null')
    expect(canonicalJson(true)).toBe('true')
    expect(canonicalJson(0)).toBe('0')
    expect(canonicalJson({})).toBe('{}')
    expect(canonicalJson([])).toBe('[]')
    expect(canon('{"a":{},"b":[],"c":[{}]}')).toBe('{"a":{},"b":[],"c":[{}]}')
  })

  it('survives 100 000 levels of nested arrays and objects', () => {
    const arrays = deepArrays(100_000)
    expect(canonicalJson(JSON.parse(arrays))).toBe(arrays)
    const objects = deepObjects(100_000)
    expect(canonicalJson(JSON.parse(objects))).toBe(objects)
    const mixed = `${'[{"b":'.repeat(50_000)}[]${'}]'.repeat(50_000)}`
    expect(canonicalJson(JSON.parse(mixed))).toBe(mixed)
    expect(requestBodyHash(`{"x":${objects}}`)).toBe(sha16(`{"x":${objects}}`))
    // Unsorted keys at depth: the explicit-stack walker must sort too.
    const unsorted = `${'{"b":1,"a":'.repeat(20_000)}0${'}'.repeat(20_000)}`
    const sorted = `${'{"a":'.repeat(20_000)}0${',"b":1}'.repeat(20_000)}`
    expect(canon(unsorted)).toBe(sorted)
  })

  it('follows JSON.stringify for values JSON cannot hold', () => {
    const value = { b: undefined, a: 1, c: () => 1, d: [undefined, () => 1, Symbol('s'), Number.NaN, Infinity], e: Symbol('t') }
    expect(canonicalJson(value)).toBe('{"a":1,"d":[null,null,null,null,null]}')
    // The same inside a subtree the explicit-stack walker handles (a __proto__ key forces it).
    const forced = { m: [JSON.parse('{"__proto__":0}') as unknown, value] }
    expect(canonicalJson(forced)).toBe('{"m":[{"__proto__":0},{"a":1,"d":[null,null,null,null,null]}]}')
    expect(() => canonicalJson(undefined)).toThrow(TypeError)
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError)
    expect(() => canonicalJson([JSON.parse('{"__proto__":0}'), 1n])).toThrow(TypeError)
  })

  it('throws on a cycle instead of looping', () => {
    const object: Record<string, unknown> = { a: 1 }
    object.self = object
    expect(() => canonicalJson(object)).toThrow(/cycle/)
    const array: unknown[] = [1]
    array.push([array])
    expect(() => canonicalJson(array)).toThrow(/cycle/)
  })

  it('accepts a shared, non-cyclic object repeated deep down', () => {
    const shared = { y: [1], x: {} }
    let value: unknown = shared
    for (let i = 0; i < 3000; i++) value = [shared, value, []]
    const expected = `${'[{"x":{},"y":[1]},'.repeat(3000)}{"x":{},"y":[1]}${',[]]'.repeat(3000)}`
    expect(canonicalJson(value)).toBe(expected)
  })

  it('does not serialize inherited properties of a polluted Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>
    Object.defineProperty(proto, 'polluted', { value: 'x', configurable: true, writable: true, enumerable: false })
    try {
      expect(canon('[{"polluted":1,"a":0},{"b":2,"a":1}]')).toBe('[{"a":0,"polluted":1},{"a":1,"b":2}]')
    } finally {
      delete proto.polluted
    }
  })

  it('matches the reference on random documents, however they are printed', () => {
    const rng = mulberry32(0x5eed)
    for (let i = 0; i < 400; i++) {
      const tree = genTree(rng, 1 + (i % 6))
      const first = print(tree, rng)
      const second = print(tree, rng)
      const value = JSON.parse(first) as unknown
      const expected = reference(value)
      expect(canonicalJson(value), first).toBe(expected)
      expect(canonicalJson(JSON.parse(second)), second).toBe(expected)
      expect(requestBodyHash(first)).toBe(sha16(expected))
      expect(requestBodyHash(Buffer.from(second, 'utf8'))).toBe(sha16(expected))
      // The same content where the explicit-stack walker must take over: a __proto__ key and deep nesting.
      const withProto = `{"w":[${first},{"__proto__":0}]}`
      expect(canonicalJson(JSON.parse(withProto))).toBe(reference(JSON.parse(withProto)))
      const deep = '['.repeat(600) + first + ']'.repeat(600)
      expect(canonicalJson(JSON.parse(deep))).toBe('['.repeat(600) + expected + ']'.repeat(600))
    }
  })

  it('writes small bodies with the small-body writer as the general one does, which takes over where it gives way', () => {
    const rng = mulberry32(0x5a11)
    for (let i = 0; i < 400; i++) {
      const tree = genTree(rng, 1 + (i % 6))
      const value = JSON.parse(`{"body":${print(tree, rng)}}`) as Record<string, unknown>
      const expected = reference(value)
      // Size 0: always the small-body writer first; infinite: always the general one.
      expect(canonicalBodyPieces(value, 0).join('')).toBe(expected)
      expect(canonicalBodyPieces(value, Number.POSITIVE_INFINITY).join('')).toBe(expected)
      expect(canonicalBodyPieces(value, 0)).toHaveLength(1)
      // Strings it writes itself and strings it hands to the native writer (escapes, surrogates, long ones).
      const strings = {
        s: ['plain', 'q"uote', 'back\\slash', 'tab\t', '\u0001', '\ud83d\ude00', '\ud800', 'é'.repeat(70), 'x"'.repeat(40)],
      }
      expect(canonicalBodyPieces(strings, 0).join('')).toBe(reference(strings))
      // What it gives way on: a __proto__ member, nesting past its depth, more values than it visits.
      for (const text of [
        `{"w":[${JSON.stringify(value)},{"__proto__":0}]}`,
        `{"deep":${'['.repeat(70)}${JSON.stringify(value)}${']'.repeat(70)}}`,
        `{"many":[${Array.from({ length: 5000 }, () => '0').join(',')}],"v":${JSON.stringify(value)}}`,
      ]) {
        const other = JSON.parse(text) as Record<string, unknown>
        expect(canonicalBodyPieces(other, 0).join('')).toBe(reference(other))
      }
    }
  })
})
