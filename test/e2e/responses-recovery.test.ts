import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents } from '../support/sse-client.js'

// `POST /v1/responses` through the model-call pipeline: a call the client left is kept and recovered, a repeated
// Idempotency-Key is replayed and an SDK retry joins the running call, passthrough and translated alike.
const RESPONSES = '/v1/responses'
const MODELS = [
  ['passthrough', 'gpt-4o-mini'],
  ['translated', 'gemini-2.5-flash'],
] as const

let fx: Fixture
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { onUsage: (u) => usage.push(u) })
})
afterAll(() => fx.close())

const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
const post = (body: unknown, headers: Record<string, string> = {}) =>
  call(`${fx.url}${RESPONSES}`, { headers: { ...bearer(KEY_A), ...headers }, body })

describe.each(MODELS)('/v1/responses, %s (%s)', (kind, model) => {
  it('a call the client left is kept: found by lookup, fetched as a Responses object, billed once as recovered', async () => {
    const marker = `left responses ${kind}`
    fx.mock.steer(marker, { delay_ms: 300 })
    const body = JSON.stringify({ model, input: marker, instructions: 'be brief' })
    await sendThenAbort(`${fx.url}${RESPONSES}`, { headers: bearer(KEY_A), body, afterMs: 50 })
    const found = await eventually(async () => {
      const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: JSON.parse(body) })
      return lookup.json.items[0] as { request_id: string } | undefined
    })
    const listed = (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.items
    expect(listed).toContainEqual(expect.objectContaining({ request_id: found.request_id, interrupted_reason: 'context canceled' }))
    const record = (await call(`${fx.url}/v1/recoveries/${found.request_id}`, { headers: bearer(KEY_A) })).json
    expect(record.request).toMatchObject({ body_raw: body, path: RESPONSES, endpoint: 'responses', model })
    expect(record.response).toMatchObject({ status: 200, content_type: 'application/json' })
    const answer = JSON.parse(record.response.body_raw)
    expect(answer).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant' }] })
    expect(answer.output[0].content[0].text).toBe(`Echo: ${marker}`)
    expect(upstreamCalls(marker)).toHaveLength(1)
    const events = await eventually(() => {
      const mine = usage.filter((u) => u.requestId === found.request_id)
      return mine.length > 0 ? mine : undefined
    })
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'responses',
        model,
        recovered: true,
        input_tokens: answer.usage.input_tokens,
        output_tokens: answer.usage.output_tokens,
      }),
    ])
  })

  it('a repeated Idempotency-Key is answered from the kept answer: same bytes and request id, one upstream call', async () => {
    const marker = `idem responses ${kind}`
    const body = { model, input: marker }
    const first = await post(body, { 'idempotency-key': `k-${kind}` })
    const second = await post(body, { 'idempotency-key': `k-${kind}` })
    expect(first.status).toBe(200)
    expect(first.json.object).toBe('response')
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(second.headers['x-request-id']).toBe(first.headers['x-request-id'])
    expect(upstreamCalls(marker)).toHaveLength(1)
    // The same key on a chat completion is another operation: refused, nothing sent upstream.
    const other = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'idempotency-key': `k-${kind}` },
      body: { model, messages: [{ role: 'user', content: marker }] },
    })
    expect(other.status).toBe(422)
    expect(upstreamCalls(marker)).toHaveLength(1)
  })

  it('a repeated Idempotency-Key of a stream replays the same SSE bytes', async () => {
    const marker = `idem responses stream ${kind}`
    const body = { model, input: marker, stream: true }
    const first = await post(body, { 'idempotency-key': `ks-${kind}` })
    const second = await post(body, { 'idempotency-key': `ks-${kind}` })
    // A keyed stream is resumable: its events carry their numbers.
    expect(first.text).toMatch(/^id: 1\nevent: response\.created\n/)
    expect(first.text).toContain('event: response.completed\n')
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls(marker)).toHaveLength(1)
  })

  it('a keyed stream cut after its first events is kept with the final response as its body, and resumes after the events it got', async () => {
    const marker = `cut responses stream ${kind}`
    fx.mock.steer(marker, { chunks: 8, chunk_delay_ms: 40 })
    const cut = await cutAfterEvents(
      `${fx.url}${RESPONSES}`,
      { ...bearer(KEY_A), 'idempotency-key': `cut-${kind}` },
      { model, input: marker, stream: true },
      3,
    )
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200
        ? (res.json as { request: { endpoint: string }; response: { body_raw: string; stream_raw: string } })
        : undefined
    })
    expect(record.request.endpoint).toBe('responses')
    expect(JSON.parse(record.response.body_raw)).toMatchObject({ object: 'response', status: 'completed' })
    const rest = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { ...bearer(KEY_A), 'last-event-id': String(cut.seen) },
    })
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    expect(rest.text).toContain('event: response.completed\n')
  })

  it('an SDK retry (x-stainless-retry-count) joins the call still running: one upstream call, the same answer', async () => {
    const marker = `join responses ${kind}`
    fx.mock.steer(marker, { delay_ms: 300 })
    const body = { model, input: marker }
    const first = post(body, { 'x-stainless-retry-count': '0' })
    await eventually(() => upstreamCalls(marker).length === 1)
    const retry = await post(body, { 'x-stainless-retry-count': '1' })
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.text).toBe((await first).text)
    expect(upstreamCalls(marker)).toHaveLength(1)
  })
})
