import { afterEach, beforeEach, expect, it } from 'vitest'
import { ownerOfKey } from '../../src/http/auth.js'
import type { UsageEvent } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeMatrix } from '../support/servers.js'

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
      upstream: 'mock',
      model: 'gpt-4o-mini',
      url: (_stream = false) => `${fx.url}/v1/chat/completions`,
      headers: bearer(KEY_A),
      body: (mock: Record<string, unknown>, stream = false) =>
        chatBody('count me', stream ? { stream: true, stream_options: { include_usage: true }, mock } : { mock }),
      usage: { prompt_tokens: 100, completion_tokens: 57, total_tokens: 157 },
      counts: {
        input_tokens: 100,
        output_tokens: 57,
        total_tokens: 157,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
      },
    },
    {
      name: 'generate-content',
      endpoint: 'generateContent',
      upstream: 'gem',
      model: 'gemini-2.5-flash',
      url: (stream = false) => `${fx.url}${gpath(stream)}`,
      headers: goog(KEY_A),
      body: (mock: Record<string, unknown>, _stream = false) => geminiBody('count me', { mock }),
      usage: { promptTokenCount: 100, toolUsePromptTokenCount: 20, candidatesTokenCount: 7, thoughtsTokenCount: 50, totalTokenCount: 177 },
      counts: {
        input_tokens: 120,
        output_tokens: 57,
        total_tokens: 177,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 50,
      },
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
      upstream: f.upstream,
      keyAlias: 'key-1',
      complete: true,
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

  it('fires once with the usage the gateway asked for, for a chat stream whose client did not ask for it', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('no usage', { stream: true }) })
    expect(res.status).toBe(200)
    // The client gets no usage: it did not ask for it.
    expect(res.text).not.toContain('"usage"')
    // The same call, asking for usage: what the upstream reports.
    const asked = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('no usage', { stream: true, stream_options: { include_usage: true } }),
    })
    const reported = JSON.parse(/"choices":\[\],"usage":(\{[^\n]*\})\}\n/.exec(asked.text)?.[1] ?? '{}')
    expect(reported.total_tokens).toBeGreaterThan(0)
    const [event] = await drained()
    expect(event).toEqual({
      requestId: res.headers['x-request-id'],
      owner: ownerOfKey(KEY_A),
      model: 'gpt-4o-mini',
      endpoint: 'chat.completions',
      input_tokens: reported.prompt_tokens,
      output_tokens: reported.completion_tokens,
      total_tokens: reported.total_tokens,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      recovered: false,
      upstream: 'mock',
      keyAlias: 'key-1',
      complete: true,
    })
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
