import diagnosticsChannel from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallEndMessage, gatewayChannels } from '../../src/observe/channels.js'
import type { UsageEvent } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, KEY_B, startFixture } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeMatrix, NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents, dataEvents, sseEvents } from '../support/sse-client.js'

const CHAT = '/v1/chat/completions'
const SLOW = { chunks: 8, chunk_delay_ms: 40 }

/** The two formats a stream can be in: where it is sent, with which key header, and what its answer says. */
const FORMATS = [
  {
    name: 'chat completions',
    path: CHAT,
    auth: bearer,
    body: (text: string, extra: Record<string, unknown> = {}) =>
      chatBody(text, { stream: true, stream_options: { include_usage: true }, mock: SLOW, ...extra }),
    whole: (text: string) => chatBody(text, { mock: SLOW }),
    content: (answer: {
      choices: Array<{ message: { content: string }; finish_reason: string }>
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number }
    }) => ({
      text: answer.choices[0]?.message.content,
      finish: answer.choices[0]?.finish_reason,
      usage: [answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.total_tokens],
    }),
  },
  {
    name: 'generate content',
    path: gpath(true),
    auth: goog,
    body: (text: string, extra: Record<string, unknown> = {}) => geminiBody(text, { mock: SLOW, ...extra }),
    whole: (text: string) => geminiBody(text, { mock: SLOW }),
    wholePath: gpath(false),
    content: (answer: {
      candidates: Array<{ content: { parts: Array<{ text: string }> }; finishReason: string }>
      usageMetadata: { promptTokenCount: number; candidatesTokenCount: number; totalTokenCount: number }
    }) => ({
      text: answer.candidates[0]?.content.parts.map((p) => p.text).join(''),
      finish: answer.candidates[0]?.finishReason,
      usage: [answer.usageMetadata.promptTokenCount, answer.usageMetadata.candidatesTokenCount, answer.usageMetadata.totalTokenCount],
    }),
  },
] as const

const recordOf = (fx: Fixture, requestId: string, key = KEY_A) =>
  eventually(async () => {
    const res = await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer(key) })
    return res.status === 200
      ? (res.json as { interrupted_reason: string; response: { body_raw: string; stream_raw?: string } })
      : undefined
  })

const resume = (fx: Fixture, requestId: string, after: number, key = KEY_A) =>
  call(`${fx.url}/v1/recoveries/${requestId}/stream`, { headers: { ...bearer(key), 'last-event-id': String(after) } })

describeMatrix('streams under recovery.streams: finish', (kind) => {
  let fx: Fixture
  beforeAll(async () => {
    fx = await startFixture(kind, { recovery: { streams: 'finish' } })
  })
  afterAll(() => fx.close())

  for (const format of FORMATS) {
    it(`${format.name}: a cut stream runs to its end, is kept assembled and as relayed, and resumes after event 3 exactly once`, async () => {
      const text = `survive ${format.name} ${kind.name}`
      const cut = await cutAfterEvents(`${fx.url}${format.path}`, format.auth(KEY_A), format.body(text), 3)
      expect(cut.status).toBe(200)
      expect(cut.seen).toBe(3)
      // Events carry their numbers.
      expect(cut.received).toMatch(/(^|\n)id: 1\n/)
      const record = await recordOf(fx, cut.requestId)
      const streamRaw = record.response.stream_raw as string
      expect(streamRaw.startsWith(cut.received)).toBe(true)
      expect(record.interrupted_reason).not.toBe('')
      // The assembled body says what a non-streaming call says for the same answer.
      const wholePath = 'wholePath' in format ? format.wholePath : format.path
      const whole = await call(`${fx.url}${wholePath}`, { headers: format.auth(KEY_A), body: format.whole(text) })
      expect(format.content(JSON.parse(record.response.body_raw))).toEqual(format.content(whole.json as never))
      // Resuming after event 3 gives the rest, once: the two parts make the whole stream.
      const rest = await resume(fx, cut.requestId, 3)
      expect(rest.status).toBe(200)
      expect(rest.headers['content-type']).toBe('text/event-stream')
      expect(cut.received + rest.text).toBe(streamRaw)
      expect(dataEvents(rest.text)).toBe(dataEvents(streamRaw) - 3)
    })
  }
})

describe('resumable streams', () => {
  const node = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
  let fx: Fixture
  const usage: UsageEvent[] = []
  beforeAll(async () => {
    fx = await startFixture(node, { recovery: { streams: 'finish' }, onUsage: (u) => usage.push(u) })
  })
  afterAll(() => fx.close())

  it('follows a stream still running here: the events after Last-Event-ID, then the live ones until its end', async () => {
    const cut = await cutAfterEvents(
      `${fx.url}${CHAT}`,
      bearer(KEY_A),
      chatBody('follow live', { stream: true, mock: { chunks: 12, chunk_delay_ms: 60 } }),
      2,
    )
    const rest = await resume(fx, cut.requestId, 2)
    const record = await recordOf(fx, cut.requestId)
    // The resume began before the upstream finished (the record came after it), and still got every later event once.
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
  })

  it('accepts ?after= as well, and 0 replays the whole stream', async () => {
    const cut = await cutAfterEvents(`${fx.url}${CHAT}`, bearer(KEY_A), chatBody('after query', { stream: true, mock: SLOW }), 2)
    const record = await recordOf(fx, cut.requestId)
    const all = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream?after=0`, { headers: bearer(KEY_A) })
    expect(all.text).toBe(record.response.stream_raw)
    const some = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream?after=4`, { headers: bearer(KEY_A) })
    expect(dataEvents(some.text)).toBe(dataEvents(all.text) - 4)
  })

  it("answers 404 in the Recoveries shape for an unknown id and for another owner's stream, 400 for a bad event number", async () => {
    const cut = await cutAfterEvents(`${fx.url}${CHAT}`, bearer(KEY_A), chatBody('owner only', { stream: true, mock: SLOW }), 2)
    await recordOf(fx, cut.requestId)
    const other = await resume(fx, cut.requestId, 0, KEY_B)
    expect(other.status).toBe(404)
    expect(other.json).toMatchObject({ request_id: cut.requestId, reason: 'RECOVERY_NOT_FOUND' })
    const unknown = await resume(fx, '01JZZZZZZZZZZZZZZZZZZZZZZZ', 0)
    expect(unknown.status).toBe(404)
    const bad = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...bearer(KEY_A), 'last-event-id': 'x' } })
    expect(bad.status).toBe(400)
  })

  it('reports the usage of a stream finished after its client left once, as recovered', async () => {
    const before = usage.length
    const cut = await cutAfterEvents(
      `${fx.url}${CHAT}`,
      bearer(KEY_A),
      chatBody('usage once', { stream: true, stream_options: { include_usage: true }, mock: SLOW }),
      2,
    )
    await recordOf(fx, cut.requestId)
    const ofCall = () => usage.slice(before).filter((u) => u.requestId === cut.requestId)
    await eventually(() => ofCall().length > 0)
    const events = ofCall()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ recovered: true })
    expect(events[0]?.output_tokens).toBeGreaterThan(0)
  })

  it('cancels a running call on purpose: the upstream call stops and what came so far is kept as cancelled', async () => {
    const cut = await cutAfterEvents(
      `${fx.url}${CHAT}`,
      bearer(KEY_A),
      chatBody('cancel me', { stream: true, mock: { chunks: 40, chunk_delay_ms: 50 } }),
      2,
    )
    const cancelled = await call(`${fx.url}/v1/recoveries/${cut.requestId}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
    expect(cancelled.status).toBe(200)
    expect(cancelled.json).toEqual({ request_id: cut.requestId, cancelled: true, reason: 'cancelled' })
    const record = await recordOf(fx, cut.requestId)
    expect(record.interrupted_reason).toBe('cancelled')
    // Far fewer than the 40 pieces the upstream would have sent, and no end marker.
    expect(dataEvents(record.response.stream_raw as string)).toBeLessThan(20)
    expect(record.response.stream_raw).not.toContain('[DONE]')
    // A resumer learns how it ended: one error event saying it was cancelled.
    const events = sseEvents(record.response.stream_raw as string)
    expect(events.at(-1)).toContain('"code":"call_cancelled"')
    const again = await call(`${fx.url}/v1/recoveries/${cut.requestId}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
    expect(again.json).toEqual({ request_id: cut.requestId, cancelled: false, reason: 'finished' })
  })

  it('cancels a whole call whose client left: the upstream call is stopped before it answers', async () => {
    const ended: CallEndMessage[] = []
    const listener = (message: unknown) => ended.push(message as CallEndMessage)
    diagnosticsChannel.subscribe(gatewayChannels.callEnd, listener)
    try {
      const body = JSON.stringify(chatBody('cancel whole', { mock: { delay_ms: 5000 } }))
      await sendThenAbort(`${fx.url}${CHAT}`, { headers: bearer(KEY_A), body, afterMs: 100 })
      const left = await eventually(() => fx.logs.find((l) => l.message.includes('client left a non-streaming call')))
      const requestId = String(left.meta?.requestId)
      const cancelled = await call(`${fx.url}/v1/recoveries/${requestId}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
      expect(cancelled.json).toEqual({ request_id: requestId, cancelled: true, reason: 'cancelled' })
      const end = await eventually(() => ended.find((m) => m.requestId === requestId))
      expect(end.error).toBe('call_cancelled')
      // Well before the upstream's 5 s answer: the call was stopped, not waited out.
      expect(end.durationMs).toBeLessThan(4000)
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, listener)
    }
  })

  it('plain streams (recovery.streams: cancel, no key) carry no event ids', async () => {
    const plain = await startFixture(node)
    try {
      const res = await call(`${plain.url}${CHAT}`, { headers: bearer(KEY_A), body: chatBody('no ids', { stream: true }) })
      expect(res.text).not.toMatch(/(^|\n)id: /)
      expect(sseEvents(res.text).length).toBeGreaterThan(2)
    } finally {
      await plain.close()
    }
  })
})
