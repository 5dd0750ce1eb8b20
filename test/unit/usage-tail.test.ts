import { describe, expect, it } from 'vitest'
import { factsOfBody } from '../../src/call/answer-facts.js'
import { gemini, openai } from '../../src/dialects/index.js'

describe('usage of a large response body', () => {
  const long = 'x'.repeat(3 << 20)

  it('is read from the tail, in either format, without parsing the whole body', () => {
    const chat = Buffer.from(
      JSON.stringify({
        id: 'c',
        choices: [{ message: { content: long } }],
        usage: { prompt_tokens: 7, completion_tokens: 9, nested: { a: '}' } },
      }),
    )
    expect(factsOfBody(openai, chat).usage).toEqual({
      input_tokens: 7,
      output_tokens: 9,
      total_tokens: 16,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
    const generated = Buffer.from(
      JSON.stringify({
        candidates: [{ content: { parts: [{ text: long }] } }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 },
        modelVersion: 'v',
      }),
    )
    expect(factsOfBody(gemini, generated).usage).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('finds none when the usage is not in the tail, or the tail is cut', () => {
    const early = Buffer.from(
      JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: 1 }, choices: [{ message: { content: long } }] }),
    )
    expect(factsOfBody(openai, early).usage).toBeUndefined()
    const cut = Buffer.from(`{"choices":"${long}","usage":{"prompt_tokens":1`)
    expect(factsOfBody(openai, cut).usage).toBeUndefined()
  })
})
