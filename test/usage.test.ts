import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ownerOfKey } from '../src/http/auth.js'
import type { UsageEvent } from '../src/types.js'
import { usageOfBody } from '../src/call/usage.js'
import { gemini as geminiDialect, openai as openaiDialect } from '../src/dialects/index.js'
import { StreamTail } from '../src/sse/tail.js'
import { bearer, chatBody, type Fixture, KEY_A, startFixture } from './helpers/fixture.js'
import { geminiBody, goog, gpath } from './helpers/gemini.js'
import { call, eventually, sendThenAbort } from './helpers/http.js'
import { describeMatrix } from './helpers/servers.js'

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
    expect(geminiDialect.usage(response)).toEqual({ input_tokens: 120, output_tokens: 57, total_tokens: 177 })
    expect(usageOfBody(geminiDialect, Buffer.from(JSON.stringify(response)))).toEqual({ input_tokens: 120, output_tokens: 57, total_tokens: 177 })
  })

  it('takes a Gemini response without tool-use or thoughts counts as prompt and candidates only', () => {
    const usage = geminiDialect.usage({ usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } })
    expect(usage).toEqual({ input_tokens: 3, output_tokens: 4, total_tokens: 7 })
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
    expect(openaiDialect.usage(completion)).toEqual({ input_tokens: 12, output_tokens: 30, total_tokens: 42 })
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
    expect(usageOfBody(geminiDialect, Buffer.from('{"usageMetadata":'))).toBeUndefined()
    expect(usageOfBody(openaiDialect, Buffer.from(''))).toBeUndefined()
  })

  it('counts absent, negative or non-numeric fields as zero', () => {
    const usage = geminiDialect.usage({
      usageMetadata: { promptTokenCount: '5', candidatesTokenCount: -3, thoughtsTokenCount: 2, toolUsePromptTokenCount: null },
    })
    expect(usage).toEqual({ input_tokens: 0, output_tokens: 2, total_tokens: 2 })
    expect(openaiDialect.usage({ usage: {} })).toEqual({ input_tokens: 0, output_tokens: 0, total_tokens: 0 })
  })
})

describe('stream tail', () => {
  const gemini = Buffer.from(
    geminiFrame('Hé', { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1, totalTokenCount: 10 } }) +
      geminiFrame('llo 世界', { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 } }) +
      geminiFrame('!', {
        usageMetadata: { promptTokenCount: 9, toolUsePromptTokenCount: 2, candidatesTokenCount: 4, thoughtsTokenCount: 6, totalTokenCount: 21 },
      }),
  )
  const final = { input_tokens: 11, output_tokens: 10, total_tokens: 21 }

  it('reads the usage of the final Gemini frame, wherever the stream was cut into chunks', () => {
    for (let at = 1; at < gemini.length; at++) {
      expect(tailOf(cut(gemini, [at])).usage(geminiDialect), `cut at ${at}`).toEqual(final)
    }
    expect(tailOf(cut(gemini, Array.from({ length: gemini.length }, (_, i) => i))).usage(geminiDialect)).toEqual(final)
  })

  it('reads a final event whose JSON spans several data: lines, with LF or CRLF line ends', () => {
    for (const eol of ['\n', '\r\n']) {
      const text =
        geminiFrame('a') +
        `data: {"candidates":[{"content":{"parts":[{"text":"b"}],"role":"model"},"index":0}],${eol}` +
        `data: "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,${eol}` +
        `data: "thoughtsTokenCount":1}}${eol}${eol}`
      expect(tailOf(cut(Buffer.from(text), [7, 40, 120])).usage(geminiDialect)).toEqual({ input_tokens: 5, output_tokens: 3, total_tokens: 8 })
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
      expect(tailOf(cut(bytes, [at])).usage(openaiDialect)).toEqual({ input_tokens: 8, output_tokens: 5, total_tokens: 13 })
    }
  })

  it('reports nothing for a stream without usage', () => {
    expect(tailOf([Buffer.from(geminiFrame('a') + geminiFrame('b'))]).usage(geminiDialect)).toBeUndefined()
    expect(tailOf([Buffer.from('data: {"choices":[]}\n\ndata: [DONE]\n\n')]).usage(openaiDialect)).toBeUndefined()
    expect(new StreamTail().usage(openaiDialect)).toBeUndefined()
  })

  it('still finds the final usage after far more than its window of earlier frames', () => {
    const tail = new StreamTail()
    const big = Buffer.from(geminiFrame('x'.repeat(8000), { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } }))
    for (let i = 0; i < 200; i++) tail.write(big)
    // The window is cut at a chunk boundary that may fall mid-event: that partial event is simply skipped.
    tail.write(big.subarray(0, 100))
    tail.write(Buffer.concat([big.subarray(100), Buffer.from(geminiFrame('end', { usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 2 } }))]))
    expect(tail.usage(geminiDialect)).toEqual({ input_tokens: 40, output_tokens: 2, total_tokens: 42 })
  })
})

describeMatrix('onUsage', (kind) => {
  let fx: Fixture
  let events: UsageEvent[]
  beforeEach(async () => {
    events = []
    fx = await startFixture(kind, { onUsage: (u) => events.push(u) })
  })
  afterEach(() => fx.close())

  /** Waits for every in-flight call (close() drains them), so "exactly once" is checked with nothing still to come. */
  const drained = async () => {
    await fx.gateway.close()
    return events
  }

  const formats = [
    {
      name: 'chat completions',
      endpoint: 'chat.completions',
      model: 'gpt-4o-mini',
      url: (_stream = false) => `${fx.url}/v1/chat/completions`,
      headers: bearer(KEY_A),
      body: (mock: Record<string, unknown>, stream = false) =>
        chatBody('count me', stream ? { stream: true, stream_options: { include_usage: true }, mock } : { mock }),
      usage: { prompt_tokens: 100, completion_tokens: 57, total_tokens: 157 },
      counts: { input_tokens: 100, output_tokens: 57, total_tokens: 157 },
    },
    {
      name: 'generate-content',
      endpoint: 'generateContent',
      model: 'gemini-2.5-flash',
      url: (stream = false) => `${fx.url}${gpath(stream)}`,
      headers: goog(KEY_A),
      body: (mock: Record<string, unknown>, _stream = false) => geminiBody('count me', mock),
      usage: { promptTokenCount: 100, toolUsePromptTokenCount: 20, candidatesTokenCount: 7, thoughtsTokenCount: 50, totalTokenCount: 177 },
      counts: { input_tokens: 120, output_tokens: 57, total_tokens: 177 },
    },
  ] as const

  for (const f of formats) {
    const expected = (requestId: string, recovered: boolean): UsageEvent => ({
      requestId,
      owner: ownerOfKey(KEY_A),
      model: f.model,
      endpoint: f.endpoint,
      ...f.counts,
      recovered,
    })

    it(`${f.name}: fires once for a delivered response`, async () => {
      const res = await call(f.url(), { headers: f.headers, body: f.body({ usage: f.usage }) })
      expect(res.status).toBe(200)
      expect(await drained()).toEqual([expected(res.headers['x-request-id'] as string, false)])
      expect(JSON.stringify(events)).not.toContain(KEY_A)
    })

    it(`${f.name}: fires once with recovered: true for a response kept after the client left`, async () => {
      const before = fx.mock.completedCalls
      await sendThenAbort(f.url(), { headers: f.headers, body: JSON.stringify(f.body({ usage: f.usage, delay_ms: 300 })), afterMs: 30 })
      await fx.mock.waitFor(() => fx.mock.completedCalls > before)
      const list = await eventually(async () => {
        const l = (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
        return l.count === 1 ? l : undefined
      })
      expect(await drained()).toEqual([expected(list.items[0].request_id, true)])
    })

    it(`${f.name}: fires once for a stream, with the usage of its final chunk`, async () => {
      const res = await call(f.url(true), { headers: f.headers, body: f.body({ usage: f.usage, chunks: 4 }, true) })
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
      expect(await drained()).toEqual([expected(res.headers['x-request-id'] as string, false)])
    })

    it(`${f.name}: does not fire when the upstream answers with an error, streaming or not`, async () => {
      for (const stream of [false, true]) {
        const res = await call(f.url(stream), { headers: f.headers, body: f.body({ status: 500 }, stream) })
        expect(res.status).toBe(500)
      }
      expect(fx.mock.requests).toHaveLength(2)
      expect(await drained()).toEqual([])
    })

    it(`${f.name}: does not fire for a stream whose client left (its upstream call was aborted)`, async () => {
      const aborted = fx.mock.abortedStreams
      await sendThenAbort(f.url(true), {
        headers: f.headers,
        body: JSON.stringify(f.body({ usage: f.usage, chunks: 50, chunk_delay_ms: 50, delay_ms: 100 }, true)),
        afterMs: 30,
      })
      await fx.mock.waitFor(() => fx.mock.abortedStreams > aborted)
      expect(await drained()).toEqual([])
    })
  }

  it('fires once with zero counts for a completed chat stream that carried no usage', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('no usage', { stream: true }) })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain('"usage"')
    expect(await drained()).toEqual([
      {
        requestId: res.headers['x-request-id'],
        owner: ownerOfKey(KEY_A),
        model: 'gpt-4o-mini',
        endpoint: 'chat.completions',
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        recovered: false,
      },
    ])
  })

  it('keeps serving when onUsage throws, and logs it', async () => {
    await fx.close()
    fx = await startFixture(kind, {
      onUsage: () => {
        throw new Error('hook failed')
      },
    })
    const res = await call(`${fx.url}${gpath(false)}`, { headers: goog(KEY_A), body: geminiBody('x') })
    expect(res.status).toBe(200)
    await fx.gateway.close()
    expect(fx.logs.map((l) => l.message)).toContain('model-gateway: onUsage threw')
  })
})
