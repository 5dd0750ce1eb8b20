import { describe, expect, it } from 'vitest'
import { factsOfBody } from '../../src/call/answer-facts.js'
import { gemini, openai } from '../../src/dialects/index.js'
import { stringsAfterKey } from '../../src/json/after-key.js'
import { StreamTail } from '../../src/sse/tail.js'

const body = (value: unknown) => Buffer.from(JSON.stringify(value))
const choice = (index: number, reason: string | null, content = 'hi') => ({
  index,
  message: { role: 'assistant', content },
  logprobs: null,
  finish_reason: reason,
})
const candidate = (index: number, reason: string | undefined, text = 'hi') => ({
  content: { parts: [{ text }], role: 'model' },
  index,
  ...(reason === undefined ? {} : { finishReason: reason }),
})
const chunk = (choices: unknown[], usage: unknown = null) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices, usage })}\n\n`
const delta = (index: number, content: string | undefined, reason: string | null = null) => ({
  index,
  delta: content === undefined ? {} : { content },
  finish_reason: reason,
})
const geminiChunk = (candidates: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ candidates, ...extra })}\r\n\r\n`

function tailOf(text: string, cutAt?: number): StreamTail {
  const tail = new StreamTail()
  const bytes = Buffer.from(text)
  if (cutAt === undefined) tail.write(bytes)
  else {
    tail.write(bytes.subarray(0, cutAt))
    tail.write(bytes.subarray(cutAt))
  }
  return tail
}

describe('finish reasons of a whole answer', () => {
  it('reads a chat completion’s reason per choice, in index order', () => {
    expect(factsOfBody(openai, body({ choices: [choice(0, 'stop')] })).finishReasons).toEqual(['stop'])
    const two = body({ choices: [choice(1, 'length'), choice(0, 'tool_calls')], usage: { prompt_tokens: 1, completion_tokens: 2 } })
    expect(factsOfBody(openai, two)).toEqual({
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      finishReasons: ['tool_calls', 'length'],
    })
  })

  it('reads a generate-content answer’s reason per candidate, in the provider’s words', () => {
    expect(factsOfBody(gemini, body({ candidates: [candidate(0, 'MAX_TOKENS')] })).finishReasons).toEqual(['MAX_TOKENS'])
    const two = body({ candidates: [candidate(0, 'STOP'), candidate(1, 'SAFETY')] })
    expect(factsOfBody(gemini, two).finishReasons).toEqual(['STOP', 'SAFETY'])
  })

  it('names none when no choice says why, the field is the other format’s, or the body is not JSON', () => {
    expect(factsOfBody(openai, body({ choices: [choice(0, null)] })).finishReasons).toBeUndefined()
    expect(factsOfBody(openai, body({ data: [{ embedding: [0.1] }], usage: { prompt_tokens: 1 } })).finishReasons).toBeUndefined()
    expect(factsOfBody(gemini, body({ choices: [choice(0, 'stop')] })).finishReasons).toBeUndefined()
    expect(factsOfBody(openai, body({ candidates: [candidate(0, 'STOP')] })).finishReasons).toBeUndefined()
    expect(factsOfBody(openai, Buffer.from('{"choices":'))).toEqual({ usage: undefined, finishReasons: undefined })
  })

  it('keeps only what can be a reason: strings of a word’s length, at a trusted index', () => {
    const odd = body({ choices: [choice(0, 'x'.repeat(65)), { index: 1e9, finish_reason: 'stop' }, { index: 2, finish_reason: 7 }] })
    // The choice at an untrusted index is placed by its position instead.
    expect(factsOfBody(openai, odd).finishReasons).toEqual(['stop'])
  })

  it('reads the answer’s own usage and reason when its text quotes or names them', () => {
    const quoting = `he wrote "finish_reason": "quoted", "usage": {"prompt_tokens": 99}`
    const chat = body({ choices: [choice(0, 'stop', quoting)], usage: { prompt_tokens: 2, completion_tokens: 3 } })
    expect(factsOfBody(openai, chat)).toEqual({
      usage: { input_tokens: 2, output_tokens: 3, total_tokens: 5, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      finishReasons: ['stop'],
    })
    // A content of exactly the key's name is a JSON string like the key itself: the real one is still found.
    const naming = body({ choices: [choice(0, 'length', 'usage')], usage: { prompt_tokens: 4, completion_tokens: 1 } })
    expect(factsOfBody(openai, naming)).toEqual({
      usage: { input_tokens: 4, output_tokens: 1, total_tokens: 5, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      finishReasons: ['length'],
    })
    expect(factsOfBody(openai, body({ choices: [choice(0, 'stop', 'usage')] }))).toEqual({ usage: undefined, finishReasons: ['stop'] })
    // A Responses answer whose metadata names a `usage` after the real one.
    const responses = body({ output: [], usage: { input_tokens: 5, output_tokens: 6 }, metadata: { usage: 'x' } })
    expect(factsOfBody(openai, responses).usage).toEqual({
      input_tokens: 5,
      output_tokens: 6,
      total_tokens: 11,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  describe('of a body too large to parse whole', () => {
    const long = 'x'.repeat(3 << 20)

    it('is read from the tail, in either format, with the usage', () => {
      const chat = body({ id: 'c', choices: [choice(0, 'length', long)], usage: { prompt_tokens: 7, completion_tokens: 9 } })
      expect(factsOfBody(openai, chat)).toEqual({
        usage: { input_tokens: 7, output_tokens: 9, total_tokens: 16, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
        finishReasons: ['length'],
      })
      const generated = body({ candidates: [candidate(0, 'STOP', long)], usageMetadata: { promptTokenCount: 3 }, modelVersion: 'v' })
      expect(factsOfBody(gemini, generated).finishReasons).toEqual(['STOP'])
    })

    it('lists the choices that ended within the tail, in order, and never a reason quoted in the text', () => {
      const quoted = `${long} he wrote "finish_reason": "quoted" and left`
      const chat = body({ choices: [choice(0, 'stop', long), choice(1, 'length', quoted), choice(2, 'stop', 'short')] })
      expect(factsOfBody(openai, chat).finishReasons).toEqual(['length', 'stop'])
    })

    it('keeps the reasons when the usage object in the tail is cut', () => {
      const cut = Buffer.from(`{"choices":[{"message":{"content":"${long}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1`)
      expect(factsOfBody(openai, cut)).toEqual({ usage: undefined, finishReasons: ['stop'] })
    })
  })
})

describe('finish reasons of a stream, from its tail', () => {
  const usage = { prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 }
  const chat = [
    chunk([delta(0, 'Hel')]),
    chunk([delta(0, 'lo')]),
    chunk([delta(0, undefined, 'stop')]),
    chunk([], usage),
    'data: [DONE]\n\n',
  ].join('')

  it('reads a chat stream’s reason with its usage, wherever the stream was cut into chunks', () => {
    for (let at = 1; at < chat.length; at += 7) {
      expect(tailOf(chat, at).read(openai), `cut at ${at}`).toEqual({
        usage: { input_tokens: 8, output_tokens: 5, total_tokens: 13, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
        finishReasons: ['stop'],
      })
    }
  })

  it('reads one reason per choice of a stream of several, whatever order they ended in', () => {
    const text =
      chunk([delta(0, 'a')]) +
      chunk([delta(1, 'b')]) +
      chunk([delta(1, undefined, 'length')]) +
      chunk([delta(0, 'c')]) +
      chunk([delta(0, undefined, 'stop')]) +
      'data: [DONE]\n\n'
    expect(tailOf(text).read(openai).finishReasons).toEqual(['stop', 'length'])
  })

  it('reads a Gemini stream’s final candidate reason, and the last one given when it repeats', () => {
    const text =
      geminiChunk([candidate(0, undefined, 'a')]) +
      geminiChunk([candidate(0, 'MAX_TOKENS', 'b')]) +
      geminiChunk([candidate(0, 'STOP', '')], { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } })
    expect(tailOf(text, 30).read(gemini)).toEqual({
      usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      finishReasons: ['STOP'],
    })
  })

  it('names none for a stream that broke off before its end', () => {
    expect(tailOf(chunk([delta(0, 'Hel')]) + chunk([delta(0, 'lo')])).read(openai).finishReasons).toBeUndefined()
    expect(tailOf(geminiChunk([candidate(0, undefined)])).read(gemini).finishReasons).toBeUndefined()
    expect(new StreamTail().read(gemini)).toEqual({ usage: undefined, finishReasons: undefined })
  })
})

describe('stringsAfterKey', () => {
  it('finds string members by key, skipping null, other values, escaped text and values too long', () => {
    const text = '{"a":null,"a" : "one","b":{"a":2},"t":"say \\"a\\": \\"no\\"","a":"x\\"y","a":"long-value","a":"two"}'
    expect(stringsAfterKey(text, 'a', 10, 5)).toEqual(['one', 'two'])
    expect(stringsAfterKey(text, 'a', 1, 5)).toEqual(['one'])
    expect(stringsAfterKey('["a","b"]', 'a', 10, 5)).toEqual([])
  })
})
