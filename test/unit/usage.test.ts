import { describe, expect, it } from 'vitest'
import { factsOfBody } from '../../src/call/answer-facts.js'
import { gemini as geminiDialect, openai as openaiDialect } from '../../src/dialects/index.js'
import { StreamTail } from '../../src/sse/tail.js'

/** Cuts a byte string at the given offsets, so one event can span several chunks. */
function cut(bytes: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set([0, ...offsets, bytes.length])].sort((a, b) => a - b)
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end))
}

function tailOf(chunks: Buffer[]): StreamTail {
  const tail = new StreamTail()
  for (const chunk of chunks) tail.write(chunk)
  return tail
}

const geminiFrame = (text: string, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }], ...extra })}\r\n\r\n`

describe('usage normalisation', () => {
  it('counts Gemini tool-use prompt tokens as input and thoughts as output', () => {
    const response = {
      candidates: [{ content: { parts: [{ text: 'hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: 100,
        toolUsePromptTokenCount: 20,
        candidatesTokenCount: 7,
        thoughtsTokenCount: 50,
        totalTokenCount: 177,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 100 }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    }
    expect(geminiDialect.usage(response)).toEqual({
      input_tokens: 120,
      output_tokens: 57,
      total_tokens: 177,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 50,
    })
    expect(factsOfBody(geminiDialect, Buffer.from(JSON.stringify(response))).usage).toEqual({
      input_tokens: 120,
      output_tokens: 57,
      total_tokens: 177,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 50,
    })
  })

  it('takes a Gemini response without tool-use or thoughts counts as prompt and candidates only', () => {
    const usage = geminiDialect.usage({ usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } })
    expect(usage).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('takes a chat completion’s prompt and completion tokens (reasoning is already inside completion_tokens)', () => {
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 30,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 4, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 20, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
    }
    expect(openaiDialect.usage(completion)).toEqual({
      input_tokens: 12,
      output_tokens: 30,
      total_tokens: 42,
      cached_input_tokens: 4,
      cache_write_tokens: 0,
      reasoning_tokens: 20,
    })
  })

  it('reports nothing when usage is missing, null or the body is not JSON', () => {
    expect(openaiDialect.usage({ id: 'x', choices: [] })).toBeUndefined()
    expect(openaiDialect.usage({ usage: null })).toBeUndefined()
    expect(geminiDialect.usage({ candidates: [] })).toBeUndefined()
    expect(geminiDialect.usage({ usageMetadata: null })).toBeUndefined()
    // The other format's field is not read: each endpoint has its own.
    expect(geminiDialect.usage({ usage: { prompt_tokens: 1, completion_tokens: 1 } })).toBeUndefined()
    expect(openaiDialect.usage({ usageMetadata: { promptTokenCount: 1 } })).toBeUndefined()
    expect(openaiDialect.usage(null)).toBeUndefined()
    expect(geminiDialect.usage('text')).toBeUndefined()
    expect(factsOfBody(geminiDialect, Buffer.from('{"usageMetadata":')).usage).toBeUndefined()
    expect(factsOfBody(openaiDialect, Buffer.from('')).usage).toBeUndefined()
  })

  it('counts absent, negative or non-numeric fields as zero', () => {
    const usage = geminiDialect.usage({
      usageMetadata: { promptTokenCount: '5', candidatesTokenCount: -3, thoughtsTokenCount: 2, toolUsePromptTokenCount: null },
    })
    expect(usage).toEqual({
      input_tokens: 0,
      output_tokens: 2,
      total_tokens: 2,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 2,
    })
    expect(openaiDialect.usage({ usage: {} })).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })
})

describe('stream tail', () => {
  const gemini = Buffer.from(
    geminiFrame('Hé', { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1, totalTokenCount: 10 } }) +
      geminiFrame('llo 世界', { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 } }) +
      geminiFrame('!', {
        usageMetadata: {
          promptTokenCount: 9,
          toolUsePromptTokenCount: 2,
          candidatesTokenCount: 4,
          thoughtsTokenCount: 6,
          totalTokenCount: 21,
        },
      }),
  )
  const final = {
    input_tokens: 11,
    output_tokens: 10,
    total_tokens: 21,
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 6,
  }

  it('reads the usage of the final Gemini frame, wherever the stream was cut into chunks', () => {
    for (let at = 1; at < gemini.length; at++) {
      expect(tailOf(cut(gemini, [at])).read(geminiDialect).usage, `cut at ${at}`).toEqual(final)
    }
    expect(
      tailOf(
        cut(
          gemini,
          Array.from({ length: gemini.length }, (_, i) => i),
        ),
      ).read(geminiDialect).usage,
    ).toEqual(final)
  })

  it('reads a final event whose JSON spans several data: lines, with LF or CRLF line ends', () => {
    for (const eol of ['\n', '\r\n']) {
      const text =
        geminiFrame('a') +
        `data: {"candidates":[{"content":{"parts":[{"text":"b"}],"role":"model"},"index":0}],${eol}` +
        `data: "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,${eol}` +
        `data: "thoughtsTokenCount":1}}${eol}${eol}`
      expect(tailOf(cut(Buffer.from(text), [7, 40, 120])).read(geminiDialect).usage).toEqual({
        input_tokens: 5,
        output_tokens: 3,
        total_tokens: 8,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 1,
      })
    }
  })

  it('reads a chat stream’s usage chunk before [DONE], skipping frames whose usage is null', () => {
    const frame = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`
    const text =
      frame({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' } }], usage: null }) +
      frame({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }) +
      frame({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 } }) +
      'data: [DONE]\n\n'
    const bytes = Buffer.from(text)
    const done = text.lastIndexOf('[DONE]')
    for (const at of [1, done - 3, done + 2, bytes.length - 1]) {
      expect(tailOf(cut(bytes, [at])).read(openaiDialect).usage).toEqual({
        input_tokens: 8,
        output_tokens: 5,
        total_tokens: 13,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
      })
    }
  })

  it('reports nothing for a stream without usage', () => {
    expect(tailOf([Buffer.from(geminiFrame('a') + geminiFrame('b'))]).read(geminiDialect).usage).toBeUndefined()
    expect(tailOf([Buffer.from('data: {"choices":[]}\n\ndata: [DONE]\n\n')]).read(openaiDialect).usage).toBeUndefined()
    expect(new StreamTail().read(openaiDialect).usage).toBeUndefined()
  })

  it('still finds the final usage after far more than its window of earlier frames', () => {
    const tail = new StreamTail()
    const big = Buffer.from(geminiFrame('x'.repeat(8000), { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } }))
    for (let i = 0; i < 200; i++) tail.write(big)
    // The window is cut at a chunk boundary that may fall mid-event: that partial event is simply skipped.
    tail.write(big.subarray(0, 100))
    tail.write(
      Buffer.concat([
        big.subarray(100),
        Buffer.from(geminiFrame('end', { usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 2 } })),
      ]),
    )
    expect(tail.read(geminiDialect).usage).toEqual({
      input_tokens: 40,
      output_tokens: 2,
      total_tokens: 42,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('reads a Responses stream’s usage from its response.completed event, even one larger than the window', () => {
    const event = (type: string, extra: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: 1, ...extra })}\n\n`
    const usage = { input_tokens: 12, output_tokens: 7, total_tokens: 19, output_tokens_details: { reasoning_tokens: 2 } }
    const completed = (text: string) =>
      event('response.completed', {
        response: { id: 'resp_1', status: 'completed', output: [{ type: 'message', content: [{ text }] }], usage },
      })
    const created = event('response.created', { response: { id: 'resp_1', status: 'in_progress', output: [], usage: null } })
    const small = Buffer.from(created + event('response.output_text.delta', { delta: 'hi' }) + completed('hi'))
    for (const at of [1, small.length - 20]) {
      expect(tailOf(cut(small, [at])).read(openaiDialect).usage).toEqual({
        input_tokens: 12,
        output_tokens: 7,
        total_tokens: 19,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 2,
      })
    }
    // The closing event repeats the whole answer: past the window, only its end is kept, where the usage is.
    const long = Buffer.from(created + completed('x'.repeat(200_000)))
    expect(
      tailOf(
        cut(
          long,
          Array.from({ length: 50 }, (_, i) => i * 4096),
        ),
      ).read(openaiDialect).usage,
    ).toEqual({
      input_tokens: 12,
      output_tokens: 7,
      total_tokens: 19,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 2,
    })
    expect(tailOf([Buffer.from(created)]).read(openaiDialect).usage).toBeUndefined()
  })
})

describe('Responses usage', () => {
  it('reads input_tokens and output_tokens of a Responses object, whole or from a large body’s tail', () => {
    const response = {
      id: 'resp_1',
      object: 'response',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'x'.repeat(2 << 20) }] }],
      usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 9, total_tokens: 39 },
      metadata: {},
    }
    expect(openaiDialect.usage(response)).toEqual({
      input_tokens: 30,
      output_tokens: 9,
      total_tokens: 39,
      cached_input_tokens: 10,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
    expect(factsOfBody(openaiDialect, Buffer.from(JSON.stringify(response))).usage).toEqual({
      input_tokens: 30,
      output_tokens: 9,
      total_tokens: 39,
      cached_input_tokens: 10,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })
})

describe("a stream's usage, read by its dialect's stream reader", () => {
  /**
   * A dialect that reports input usage in its first event and output usage in its last (as Anthropic's
   * `message_start` and `message_delta` do): its reader keeps the newest output count and the input count, from
   * whichever event it comes.
   */
  const splitUsage = {
    ...openaiDialect,
    streamUsage() {
      let input: number | undefined
      let output: number | undefined
      return {
        event(event: unknown) {
          const { kind, tokens } = event as { kind?: string; tokens?: number }
          if (kind === 'start') input ??= tokens
          if (kind === 'delta') output ??= tokens
        },
        get complete() {
          return input !== undefined && output !== undefined
        },
        usage: () =>
          input === undefined && output === undefined
            ? undefined
            : {
                input_tokens: input ?? 0,
                output_tokens: output ?? 0,
                total_tokens: (input ?? 0) + (output ?? 0),
                cached_input_tokens: 0,
                cache_write_tokens: 0,
                reasoning_tokens: 0,
              },
      }
    },
  }
  const event = (body: object) => Buffer.from(`data: ${JSON.stringify(body)}\n\n`)

  it('finds the input count in the first event of a stream much longer than its tail', () => {
    const filler = Array.from({ length: 400 }, (_, i) => event({ kind: 'text', text: `${i} ${'x'.repeat(500)}` }))
    const chunks = [
      event({ kind: 'start', tokens: 12 }),
      ...filler,
      event({ kind: 'delta', tokens: 3 }),
      event({ kind: 'delta', tokens: 40 }),
    ]
    expect(chunks.reduce((sum, chunk) => sum + chunk.length, 0)).toBeGreaterThan(128 * 1024)
    expect(tailOf(chunks).read(splitUsage).usage).toEqual({
      input_tokens: 12,
      output_tokens: 40,
      total_tokens: 52,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('reads a short stream once, from its tail alone', () => {
    const chunks = [event({ kind: 'start', tokens: 5 }), event({ kind: 'delta', tokens: 7 })]
    expect(tailOf(chunks).read(splitUsage).usage).toEqual({
      input_tokens: 5,
      output_tokens: 7,
      total_tokens: 12,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })

  it('stops at the newest usage for a dialect whose events carry it whole', () => {
    const chunks = [
      Buffer.from(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } })}\n\n`),
      Buffer.from(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } })}\n\n`),
      Buffer.from('data: [DONE]\n\n'),
    ]
    expect(tailOf(chunks).read(openaiDialect).usage).toEqual({
      input_tokens: 9,
      output_tokens: 4,
      total_tokens: 13,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    })
  })
})
