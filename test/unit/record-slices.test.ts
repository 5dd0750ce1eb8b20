import { describe, expect, it } from 'vitest'
import { assembledAnswer, assembledAnswerInSlices } from '../../src/dialects/index.js'
import { textInSlices } from '../../src/http/join-chunks.js'
import { keyvStringInSlices, parseJsonBytesInSlices, parseJsonInSlices } from '../../src/json/parse-in-slices.js'
import { jsonBytesInSlices, jsonTextInSlices } from '../../src/json/text-in-slices.js'
import { eventData, eventDataInSlices } from '../../src/sse/parse.js'
import type { CallPlan } from '../../src/translate/index.js'
import { turnsDuring } from '../support/loop-turns.js'

const MiB = 1024 * 1024
const PLAN: CallPlan = {
  model: 'm',
  upstreamModel: 'm',
  stream: true,
  includeUsage: true,
  requestId: 'req1',
  created: 1_700_000_000,
  request: {},
}

/** Strings whose slices fall on escapes, surrogate pairs and runs of backslashes. */
const TRICKY = [
  'plain text',
  'a"b\\c\nd\te\u0000f\u001fg\u007f',
  '😀'.repeat(13),
  `x${'😀'.repeat(13)}`,
  '\ud83d lone high, lone low \ude00 end',
  '\\'.repeat(40),
  `${'\\"'.repeat(20)}é中`,
  'é中\u2028\u2029</script>',
  '',
]

describe('jsonTextInSlices', () => {
  it('writes the text JSON.stringify writes, to the byte, and measures its UTF-8 size', async () => {
    const values: unknown[] = [
      ...TRICKY,
      { a: TRICKY, [TRICKY[1] as string]: 1, nested: { deeper: [[], {}, [TRICKY[2]]] } },
      [undefined, () => 1, Symbol('s'), null, true, false, 0, -0, 1.5e300, Number.NaN, Number.POSITIVE_INFINITY],
      { skipped: undefined, fn: () => 1, sym: Symbol('s'), kept: 'yes', 2: 'two', 1: 'one' },
      { date: new Date(0), boxed: [new String('s'), new Number(3), new Boolean(false)], toJSON: undefined },
      { custom: { toJSON: (key: string) => `custom under ${key}` } },
      JSON.parse('{"__proto__":{"x":1},"b":[1,2]}'),
      42,
      null,
    ]
    for (const value of values) {
      for (const sliceChars of [2, 3, 7, 1024]) {
        const written = await jsonTextInSlices(value, sliceChars)
        const expected = JSON.stringify(value)
        expect(written?.text).toBe(expected)
        expect(written?.bytes).toBe(Buffer.byteLength(expected))
      }
    }
    expect(await jsonTextInSlices(undefined)).toBeUndefined()
  })

  it('writes the same text as UTF-8 bytes, between what goes before and after it', async () => {
    for (const value of [...TRICKY, { a: TRICKY }, `${'é😀"'.repeat(40_000)}`]) {
      for (const sliceChars of [3, 1024]) {
        const bytes = await jsonBytesInSlices(value, '{"value":', ',"expires":1}', sliceChars)
        expect(bytes?.equals(Buffer.from(`{"value":${JSON.stringify(value)},"expires":1}`))).toBe(true)
      }
    }
    expect(await jsonBytesInSlices(undefined)).toBeUndefined()
  })

  it('writes the same bytes into one buffer of an expected size, grown when it was too small', async () => {
    const value = { a: TRICKY, big: `${'é😀"'.repeat(40_000)}` }
    const expected = Buffer.from(`{"value":${JSON.stringify(value)},"expires":1}`)
    for (const expectedBytes of [0, 1000, expected.length - 1, expected.length, 2 * expected.length]) {
      for (const sliceChars of [3, 1024]) {
        const bytes = await jsonBytesInSlices(value, '{"value":', ',"expires":1}', sliceChars, expectedBytes)
        expect(bytes?.equals(expected)).toBe(true)
      }
    }
  })

  it('rejects what JSON.stringify throws on', async () => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle.self = { back: cycle }
    await expect(jsonTextInSlices(cycle)).rejects.toThrow(TypeError)
    await expect(jsonTextInSlices({ n: 1n })).rejects.toThrow(TypeError)
    // The same object twice, side by side, is no cycle.
    const shared = { s: 1 }
    expect((await jsonTextInSlices([shared, shared]))?.text).toBe('[{"s":1},{"s":1}]')
  })

  it('writes a 20 MiB answer with a turn of the event loop after each MiB', async () => {
    const answer = { content: [{ type: 'text', text: `"é"${'x'.repeat(20 * MiB)}` }], usage: { output_tokens: 5 } }
    const { result, turns } = await turnsDuring(() => jsonTextInSlices(answer))
    expect(result?.text === JSON.stringify(answer)).toBe(true)
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})

describe('keyvStringInSlices', () => {
  it("reads what Keyv's default serializer writes for a string, from its bytes, whatever falls at the edges", async () => {
    for (const value of [...TRICKY.filter((t) => !t.startsWith(':')), `${'é😀"\\'.repeat(5000)}x`]) {
      for (const expires of [1_700_000_000_000, undefined]) {
        // Keyv's default serializer writes a string as JSON.stringify does, `expires` left out when undefined.
        const bytes = Buffer.from(JSON.stringify({ value, expires }))
        for (const sliceBytes of [1, 2, 5, 7, 1024]) expect(await keyvStringInSlices(bytes, sliceBytes)).toEqual({ value, expires })
      }
    }
  })

  it('leaves anything else to be read whole: a marked string, another value, broken text', async () => {
    const others = [
      '{"value":":x","expires":1}',
      '{"value":1}',
      '{"expires":1,"value":"x"}',
      '{"value":"a"b"}',
      '{"value":"a',
      '{"value":"a\\x"}',
    ]
    for (const text of others) expect(await keyvStringInSlices(Buffer.from(text), 2)).toBeUndefined()
    const { turns } = await turnsDuring(() => keyvStringInSlices(Buffer.from(JSON.stringify({ value: '\\"'.repeat(4 * MiB) })), MiB))
    // The closing quote sought, then the string read, a turn after each MiB of its 16 MiB of text.
    expect(turns).toBeGreaterThanOrEqual(24)
  })
})

describe('parseJsonInSlices', () => {
  it('parses as JSON.parse does, whatever falls at the edges of its slices', async () => {
    const texts = [
      ...TRICKY.map((s) => JSON.stringify({ type: 'response.completed', response: { text: s, more: [s, { s }] } })),
      // Escapes JSON.stringify never writes: \/, \uXXXX for plain characters, surrogate pairs as escapes.
      '{"a":"\\/\\u0041\\u00e9\\ud83d\\ude00\\\\\\"","k":["\\u005c\\u0022"]}',
      `{"${'long key '.repeat(10)}":"${'v'.repeat(50)}"}`,
      ` [ "${'s'.repeat(30)}" , 1 , {"x" : "${'t'.repeat(30)}"} ] `,
    ]
    for (const text of texts) {
      for (const sliceChars of [2, 5, 6, 7, 11]) expect(await parseJsonInSlices(text, sliceChars)).toEqual(JSON.parse(text))
    }
  })

  it('gives undefined for text that is not JSON, as parseJson does', async () => {
    const bad = [
      `{"a":"${'x'.repeat(30)}\\q"}`,
      `{"a":"${'x'.repeat(30)}\n"}`,
      `{"a":"${'x'.repeat(30)}`,
      `{"a":"${'x'.repeat(30)}"} trailing`,
      `{"a":"${'x'.repeat(30)}",}`,
      `{"a":"${'x'.repeat(30)}\\u12G4"}`,
    ]
    for (const text of bad) expect(await parseJsonInSlices(text, 8)).toBeUndefined()
  })

  it('parses a 20 MiB event with a turn of the event loop after each MiB', async () => {
    const text = JSON.stringify({ type: 'response.completed', response: { output: [{ text: `é"\\${'x'.repeat(20 * MiB)}` }] } })
    const { result, turns } = await turnsDuring(() => parseJsonInSlices(text))
    expect(result).toEqual(JSON.parse(text))
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})

describe('parseJsonBytesInSlices', () => {
  it('parses UTF-8 bytes as JSON.parse parses their text, whatever falls at the edges of its slices', async () => {
    const texts = [
      ...TRICKY.map((s) => JSON.stringify({ model: 'm', instructions: s, input: [s, { s }], background: true })),
      '{"a":"\\/\\u0041\\u00e9\\ud83d\\ude00\\\\\\"","k":["\\u005c\\u0022"]}',
      `{"${'long key '.repeat(10)}":"${'v'.repeat(50)}"}`,
      ` { "a" : "${'é😀中'.repeat(30)}" , "b" : 1 , "c" : {"x" : "${'t'.repeat(30)}"} } `,
    ]
    for (const text of texts) {
      for (const sliceBytes of [2, 5, 6, 7, 11, 1024])
        expect(await parseJsonBytesInSlices(Buffer.from(text), sliceBytes)).toEqual(JSON.parse(text))
    }
  })

  it('gives undefined for bytes that are not JSON, as parseJsonInSlices does', async () => {
    const bad = [
      `{"a":"${'x'.repeat(30)}\\q"}`,
      `{"a":"${'x'.repeat(30)}\n"}`,
      `{"a":"${'x'.repeat(30)}\u0001x"}`,
      `{"a":"${'x'.repeat(30)}`,
      `{"a":"${'x'.repeat(30)}"} trailing`,
      `{"a":"${'x'.repeat(30)}",}`,
      `{"a":"${'x'.repeat(30)}\\u12G4"}`,
    ]
    for (const text of bad) expect(await parseJsonBytesInSlices(Buffer.from(text), 8)).toBeUndefined()
  })

  it('parses a 20 MiB request with a turn of the event loop after each MiB', async () => {
    const text = JSON.stringify({ model: 'm', instructions: `é"\\\n${'x'.repeat(20 * MiB)}`, input: 'Hello' })
    const { result, turns } = await turnsDuring(() => parseJsonBytesInSlices(Buffer.from(text)))
    expect(result).toEqual(JSON.parse(text))
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})

/** Whole events of mixed text, a few with bytes that are not UTF-8, one of them larger than a slice. */
function mixedEvents(): Buffer[] {
  const events: Buffer[] = []
  for (let i = 0; i < 300; i++) {
    const text = `${'é中😀a'.repeat(1000)}${i}`
    const body = Buffer.from(`id: ${i}\r\ndata: {"t":"${text}"}\r\ndata: second line\n\n`)
    events.push(i % 50 === 7 ? Buffer.concat([body.subarray(0, 40), Buffer.from([0xe2, 0x82, 0xff, 0xc0]), body.subarray(40)]) : body)
  }
  events.push(Buffer.from(`event: big\ndata: ${'中'.repeat(MiB)}\ndata:\ndata:x\r\n: comment\n\n`))
  return events
}

describe('a kept stream decoded and read a slice at a time', () => {
  it('decodes to the text of the joined buffer, and measures it', async () => {
    const events = mixedEvents()
    const { result, turns } = await turnsDuring(() => textInSlices(events))
    const whole = Buffer.concat(events).toString('utf8')
    expect(result.text === whole).toBe(true)
    expect(result.bytes).toBe(Buffer.byteLength(whole))
    expect(turns).toBeGreaterThanOrEqual(5)
  })

  it('reads the data of every event, a large one included, as eventData reads the text', async () => {
    const events = mixedEvents()
    expect(await eventDataInSlices(events)).toEqual(eventData(Buffer.concat(events).toString('utf8')))
  })

  it('reads one 20 MiB event with a turn of the event loop after each MiB', async () => {
    const event = Buffer.from(`event: response.completed\ndata: {"text":"${'é'.repeat(10 * MiB)}"}\n\n`)
    const { result, turns } = await turnsDuring(() => eventDataInSlices([event]))
    expect(result[0] === eventData(event.toString('utf8'))[0]).toBe(true)
    expect(result).toHaveLength(1)
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})

/** A Messages stream of about `chars` of text, as event data. */
function messagesStream(bytes: number): string[] {
  const data = [
    JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: {} } }),
  ]
  data.push(JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }))
  const piece = 'é'.repeat(25_000)
  for (let sent = 0; sent < bytes; sent += piece.length) {
    data.push(JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }))
  }
  data.push(JSON.stringify({ type: 'content_block_stop', index: 0 }))
  data.push(JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }))
  data.push(JSON.stringify({ type: 'message_stop' }))
  return data
}

/** A Responses stream of about `bytes` of text, ending with the whole response. */
function responsesStream(bytes: number): string[] {
  const piece = 'x"'.repeat(25_000)
  const data: string[] = []
  let text = ''
  for (let sent = 0; sent < bytes; sent += piece.length) {
    data.push(JSON.stringify({ type: 'response.output_text.delta', delta: piece }))
    text += piece
  }
  const response = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    output: [{ type: 'message', content: [{ type: 'output_text', text }] }],
  }
  data.push(JSON.stringify({ type: 'response.completed', sequence_number: data.length, response }))
  return data
}

describe('Messages and Responses streams are assembled a slice at a time', () => {
  it.each([
    ['messages', messagesStream(20 * MiB)],
    ['responses', responsesStream(10 * MiB)],
  ] as const)('%s: the same answer as at once, with a turn of the event loop after each MiB', async (operation, data) => {
    const { result, turns } = await turnsDuring(() => assembledAnswerInSlices(operation, data, PLAN))
    expect(result).toEqual(assembledAnswer(operation, data, PLAN))
    expect(turns).toBeGreaterThanOrEqual(15)
  })
})
