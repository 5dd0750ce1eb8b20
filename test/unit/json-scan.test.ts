import { describe, expect, it } from 'vitest'
import { validateBatchEmbedContents } from '../../src/dialects/gemini/validate.js'
import { validateChat } from '../../src/dialects/openai/validate.js'
import { GatewayError } from '../../src/errors.js'
import { BIG_STRING, scanJsonObject } from '../../src/json/scan-body.js'
import { exact, sameValidation, scanChat } from '../support/json-agreement.js'
import { Gen, numberText } from '../support/json-corpus.js'
import { turnsDuring } from '../support/loop-turns.js'

describe('scanJsonObject', () => {
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
      await expect(scanChat(Buffer.from(text, 'utf8'))).rejects.toThrow(`The request body is not valid JSON: ${reason}.`)
    }
    for (const text of ['[]', '[1]', '"{}"', '1', 'null', 'true', ' [{"model":"x"}] ']) {
      const error = await scanChat(Buffer.from(text)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(GatewayError)
      expect((error as GatewayError).code).toBe('invalid_request')
      expect((error as GatewayError).message).toBe('The request body must be a JSON object.')
    }
  })

  it('without a skeleton, checks a body exactly alike and keeps none of its members', async () => {
    const many = Buffer.from(
      JSON.stringify({ model: 'm', messages: Array.from({ length: 5000 }, (_, i) => ({ role: 'user', content: `m${i}` })) }),
    )
    for (const body of [many, Buffer.from('{"a":[1,{"b":"c"}],"model":"m"}'), Buffer.from('{}')]) {
      expect(await scanChat(body, { skeleton: false, sliceBytes: 4096 })).toEqual({})
    }
    for (const text of ['{"a":01}', '{"a":"\\x"}', '{"a":1} x', '[1]', '{"a":[1,]}', `{"a":${'['.repeat(50)}${']'.repeat(50)}}`]) {
      const bytes = Buffer.from(text)
      const rules = { maxDepth: 20, singleKeys: new Set<string>() }
      const withSkeleton = await scanChat(bytes, { rules }).catch((e: unknown) => String(e))
      const without = await scanChat(bytes, { rules, skeleton: false }).catch((e: unknown) => String(e))
      expect(typeof withSkeleton).toBe('string')
      expect(without).toBe(withSkeleton)
    }
  })

  it('accepts nesting 100 000 levels deep, arrays and objects, without recursion', async () => {
    const depth = 100_000
    const arrays = Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth)},"model":"m"}`)
    const skeleton = await scanChat(arrays)
    expect(skeleton).toEqual({ a: [[]], model: 'm' })
    const objects = Buffer.from(`{"a":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`)
    expect(await scanChat(objects)).toEqual({ a: {} })
    const mixed = Buffer.from(`{"a":${'[{"b":'.repeat(depth)}null${'}]'.repeat(depth)}}`)
    expect(await scanChat(mixed, { smallValueBytes: 8 })).toEqual({ a: [{}] })
    // Exact (parsed) where the deep value is small enough.
    const small = Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`)
    const exactDeep = await scanChat(small, { smallValueBytes: 1e9, sliceBytes: 4096 })
    let cursor: unknown = exactDeep.a
    let levels = 0
    while (Array.isArray(cursor) && cursor.length > 0) {
      cursor = cursor[0]
      levels++
    }
    expect(levels).toBe(depth - 1)
    // Deep but invalid or not an object.
    await expect(scanChat(Buffer.from(`{"a":${'['.repeat(depth)}${']'.repeat(depth - 1)}}`))).rejects.toThrow(
      /not valid JSON: expected ',' or ']', found '}'/,
    )
    await expect(scanChat(Buffer.from('['.repeat(depth) + ']'.repeat(depth)))).rejects.toThrow('The request body must be a JSON object.')
    await expect(scanChat(Buffer.from(`{"a":${'['.repeat(depth)}`))).rejects.toThrow(`unexpected end of input at byte ${depth + 5}.`)
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
    const { result: skeleton, turns } = await turnsDuring(() => scanChat(body))
    expect(fired).toBe(true)
    // One turn of the loop per 256 KiB slice at least (turns counted, not time).
    expect(turns).toBeGreaterThanOrEqual(Math.floor(body.length / (256 * 1024)) - 1)
    expect(validateChat(skeleton)).toEqual({ model: 'gpt-4o', stream: true })
    expect(skeleton.temperature).toBe(0.5)
    const list = skeleton.messages as Array<Record<string, unknown>>
    expect(list).toHaveLength(messages.length)
    // Each element summed up by what chat validation reads, all of them by one shared, frozen object.
    expect(list[0]).toEqual({ role: '' })
    expect(new Set(list).size).toBe(1)
    expect(Object.isFrozen(list[0])).toBe(true)

    // A body within one slice is scanned without a turn of the loop.
    let early = false
    setImmediate(() => {
      early = true
    })
    await scanChat(Buffer.from('{"model":"m","messages":[{"role":"user"}]}'))
    expect(early).toBe(false)
  })

  it('makes a top-level __proto__ an own property, as JSON.parse does', async () => {
    for (const small of [8, 1e9]) {
      const skeleton = await scanChat(Buffer.from('{"__proto__":{"model":"evil","x":"a long string here"},"y":1}'), {
        smallValueBytes: small,
      })
      expect(Object.getPrototypeOf(skeleton)).toBe(Object.prototype)
      expect(Object.hasOwn(skeleton, '__proto__')).toBe(true)
      expect(Object.keys(skeleton)).toEqual(['__proto__', 'y'])
      expect(skeleton.model).toBeUndefined()
      expect((skeleton as { x?: unknown }).x).toBeUndefined()
    }
    const text = '{"messages":[{"__proto__":{"r":1},"content":"a long string here"}]}'
    // A small array's element is parsed (an own __proto__); a big array's is summed up (no member read but role).
    const exactly = await scanChat(Buffer.from(text), { smallValueBytes: 1e9 })
    expect(Object.hasOwn((exactly.messages as object[])[0] as object, '__proto__')).toBe(true)
    const messages = await scanChat(Buffer.from(text), { smallValueBytes: 8 })
    const first = (messages.messages as object[])[0] as Record<string, unknown>
    expect(Object.getPrototypeOf(first)).toBe(Object.prototype)
    expect(first).toEqual({})
    expect(first.r).toBeUndefined()
    expect(() => validateChat({ model: 'm', ...messages })).toThrow("'messages[0].role' must be a string.")
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
        const skeleton = await scanChat(Buffer.from(text), { smallValueBytes: small })
        sameValidation(skeleton, parsed, `${text} ${small}`)
        if (small === 1e9) expect(exact(skeleton)).toBe(exact(parsed))
      }
    }
    expect((await scanChat(Buffer.from(`{"model":"a","model":${big}}`), { smallValueBytes: 8 })).model).toBe(BIG_STRING)
    expect(await scanChat(Buffer.from(`{"x":{"a":1,"a":{"b":${big}}}}`), { smallValueBytes: 8 })).toEqual({ x: {} })
    expect(await scanChat(Buffer.from(`{"x":{"a":{"b":${big}},"a":2}}`), { smallValueBytes: 8 })).toEqual({ x: { a: 2 } })
  })

  it('leaves out members whose key is longer than 64 KiB, unless smallValueBytes is larger', async () => {
    const long = 'k'.repeat(70_000)
    const text = `{"model":"m","${long}":1,"messages":[{"${long}":2,"role":"user"}],"x":{"${long}":[3],"y":"${'z'.repeat(70_000)}"}}`
    const skeleton = await scanChat(Buffer.from(text))
    expect(skeleton).toEqual({ model: 'm', messages: [{ role: '' }], x: { y: BIG_STRING } })
    expect(validateChat(skeleton)).toEqual({ model: 'm', stream: false })
    expect(exact(await scanChat(Buffer.from(text), { smallValueBytes: 1e9, sliceBytes: 1000 }))).toBe(exact(JSON.parse(text)))
  })

  it('builds the skeleton: small values parsed, big strings marked, big arrays and objects reduced, elements summed up', async () => {
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
    const skeleton = await scanChat(Buffer.from(text), { smallValueBytes: 12 })
    expect(skeleton).toEqual({
      model: 'gpt',
      prompt: BIG_STRING,
      messages: [{ role: '' }, [], [1], BIG_STRING, 'short', 3.25, null, { role: '' }],
      options: { a: BIG_STRING, f: true, g: 1.5e300 },
      // biome-ignore lint/correctness/noPrecisionLoss: a literal beyond double precision, as a client may send
      seed: 12345678901234567890,
    })
  })

  it('sums up the elements of a big array by the members the route reads: their type, the last duplicate winning', async () => {
    const pad = `"pad":"${'p'.repeat(100)}"`
    const elements = [
      '{"role":"user","n":1}',
      `{${pad},"\\u0072ole":"escaped"}`,
      `{"role":"user","role":{"a":1}}`,
      `{"role":{"a":1},"role":"user"}`,
      `{"rolex":"no","name":"role"}`,
      `{"role":[1],${pad}}`,
      `{"role":1.5}`,
      `{"role":true}`,
      `{"role":false}`,
      `{"role":null}`,
      `{"content":{"parts":[]},"role":"model"}`,
    ]
    const text = `{"model":"m","messages":[${elements.join(',')}]}`
    const parsed = JSON.parse(text) as { messages: Array<Record<string, unknown>> }
    const skeleton = await scanJsonObject(Buffer.from(text), { smallValueBytes: 64, elementFields: ['role', 'content'] })
    const list = skeleton.messages as Array<Record<string, unknown>>
    expect(list).toHaveLength(elements.length)
    // The first element is parsed whole: the array was not yet known to be big.
    expect(list[0]).toEqual(parsed.messages[0])
    expect(list.slice(1)).toEqual([
      { role: '' },
      { role: {} },
      { role: '' },
      {},
      { role: [] },
      { role: 0 },
      { role: true },
      { role: false },
      { role: null },
      { role: '', content: {} },
    ])
    for (let i = 1; i < list.length; i++) expect(typeof list[i]?.role, text).toBe(typeof parsed.messages[i]?.role)
    // Elements alike share one summary.
    const again = await scanJsonObject(Buffer.from(`{"a":[${pad.replace('"pad":', '')},{"role":"a"},{"role":"b","x":1}]}`), {
      smallValueBytes: 8,
      elementFields: ['role'],
    })
    const [, first, second] = again.a as object[]
    expect(first).toBe(second)
    // Without element fields, every element of a big array is an empty summary, and nothing below it is reported.
    expect((await scanJsonObject(Buffer.from(text), { smallValueBytes: 64 })).messages).toEqual([
      parsed.messages[0],
      ...elements.slice(1).map(() => ({})),
    ])
  })

  it('validates a big array of shared summaries as its parsed body, naming the first element that fails', async () => {
    const chat = (roles: string[]) => `{"model":"m","messages":[${roles.map((role) => `{"role":${role},"content":"x"}`).join(',')}]}`
    const body = chat([...Array(1000).fill('"user"'), '1', ...Array(10).fill('"user"'), '2'])
    const skeleton = await scanJsonObject(Buffer.from(body), { smallValueBytes: 64, elementFields: ['role'] })
    const messages = skeleton.messages as object[]
    // The failing elements share one summary, as the passing ones share another.
    expect(messages[1000]).toBe(messages[1011])
    expect(() => validateChat(skeleton)).toThrow("'messages[1000].role' must be a string.")
    expect(() => validateChat(JSON.parse(body))).toThrow("'messages[1000].role' must be a string.")
    const fine = await scanJsonObject(Buffer.from(chat(Array(1000).fill('"user"'))), { smallValueBytes: 64, elementFields: ['role'] })
    expect(validateChat(fine)).toEqual({ model: 'm', stream: false })
    const batch = `{"requests":[${[...Array(500).fill('{"content":{}}'), '{"content":"x"}'].join(',')}]}`
    const batchSkeleton = await scanJsonObject(Buffer.from(batch), { smallValueBytes: 64, elementFields: ['content'] })
    expect(() => validateBatchEmbedContents(batchSkeleton)).toThrow("'requests[500].content' must be an object.")
    expect(() => validateBatchEmbedContents(JSON.parse(batch))).toThrow("'requests[500].content' must be an object.")
  })

  it('reads numbers of any length exactly as JSON.parse does', async () => {
    const g = new Gen(77)
    const texts = [
      '0',
      '-0',
      '-0.0',
      '0e5',
      '-0.000e-7',
      '1',
      '-1',
      '1e400',
      '-1e400',
      '1e-400',
      '4.9e-324',
      '2.4e-324',
      '2.5e-324',
      '1.7976931348623157e308',
      '1.7976931348623158e308',
      '1.7976931348623159e308',
      '9007199254740993',
      `9007199254740993${'0'.repeat(1000)}1e-1001`,
      `9007199254740993${'0'.repeat(1000)}e-1000`,
      `9007199254740992${'9'.repeat(900)}`,
      `1${'0'.repeat(5000)}e-5000`,
      `0.${'0'.repeat(5000)}1e5001`,
      '1e0000000000000000000000000000000000001',
      '1e-0000000000000000000000000000000000001',
      '1e99999999999999999999',
      '1e-99999999999999999999',
      '0e99999999999999999999',
      '123456789012345678901234567890.123456789e-20',
    ]
    for (let k = 0; k < 2000; k++) texts.push(numberText(g))
    for (const number of texts) {
      const skeleton = await scanChat(Buffer.from(`{"n":${number},"m":[${number}],"o":{"p":${number}}}`), { smallValueBytes: 5 })
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
      expect(exact(await scanChat(bytes, { sliceBytes: slice, smallValueBytes: 1e9 }))).toBe(exact(parsed))
      for (const small of [5, 8, 16, 32])
        sameValidation(await scanChat(bytes, { sliceBytes: slice, smallValueBytes: small }), parsed, `${slice} ${small}`)
    }
  })
})
