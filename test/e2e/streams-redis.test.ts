import { createClient } from '@keyv/redis'
import { expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway } from '../../src/gateway.js'
import { startMockUpstream } from '../../src/testing/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { type GatewayProcess, startGatewayProcess, useProcessesOnRedis } from '../support/gateway-process.js'
import { call, eventually, open, readResponse, sendThenAbort } from '../support/http.js'
import {
  type AdminClient,
  describeWithRedis,
  gatewayCommandCalls,
  keysMatching,
  killAllOwnRedis,
  REDIS_URL,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { serve } from '../support/servers.js'
import { cutAfterEvents, dataEvents } from '../support/sse-client.js'

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-streams-${process.pid}-${Date.now().toString(36)}`
const KEY = 'sk-stream-owner'
const CHAT = '/v1/chat/completions'

await describeWithRedis('Streams across gateway processes on one Redis', () => {
  const shared = useProcessesOnRedis(RUN)
  const start = (namespace: string) =>
    startGatewayProcess({
      redisUrl: REDIS_URL,
      namespace: `${RUN}-${namespace}`,
      upstreamUrl: shared.mock.url,
      apiKeys: [KEY],
      recovery: { streams: 'finish' },
    })
  const cut = (gw: GatewayProcess, content: string, mock: Record<string, unknown>, events: number) =>
    cutAfterEvents(`${gw.url}${CHAT}`, bearer(KEY), chatBody(content, { stream: true, mock }), events)
  const resume = (gw: GatewayProcess, requestId: string, after: number) =>
    call(`${gw.url}/v1/recoveries/${requestId}/stream`, { headers: { ...bearer(KEY), 'last-event-id': String(after) } })
  const record = (gw: GatewayProcess, requestId: string) =>
    eventually(async () => {
      const res = await call(`${gw.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY) })
      return res.status === 200 ? (res.json as { interrupted_reason: string; response: { stream_raw: string } }) : undefined
    }, 15_000)

  it('resumes on process B a stream cut on process A while it still runs, every event once', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('live'), start('live')])
    const cutOff = await cut(a, 'resume elsewhere live', { chunks: 30, chunk_delay_ms: 60 }, 3)
    const rest = await resume(b, cutOff.requestId, 3)
    expect(rest.status).toBe(200)
    const kept = await record(b, cutOff.requestId)
    expect(cutOff.received + rest.text).toBe(kept.response.stream_raw)
    expect(rest.text).toContain('[DONE]')
    // The upstream was asked once.
    expect(shared.mock.requests.filter((r) => r.body.includes('resume elsewhere live'))).toHaveLength(1)
  })

  it('resumes on process B a stream cut on process A after it finished, from its record', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('done'), start('done')])
    const cutOff = await cut(a, 'resume elsewhere done', { chunks: 6, chunk_delay_ms: 30 }, 2)
    const kept = await record(b, cutOff.requestId)
    const rest = await resume(b, cutOff.requestId, 2)
    expect(cutOff.received + rest.text).toBe(kept.response.stream_raw)
    expect(dataEvents(rest.text)).toBe(dataEvents(kept.response.stream_raw) - 2)
  })

  it('serves a repeated Idempotency-Key on process B by following the stream its first attempt runs on process A', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await Promise.all([start('keyed'), start('keyed')])
    const body = chatBody('keyed follow elsewhere', { stream: true, mock: { chunks: 30, chunk_delay_ms: 60 } })
    const keyed = { ...bearer(KEY), 'idempotency-key': 'k-follow-elsewhere' }
    const cutOff = await cutAfterEvents(`${a.url}${CHAT}`, keyed, body, 2)
    // The first attempt's client is gone; its retry reaches the other process while the stream still runs there.
    const completed = shared.mock.completedCalls
    const opened = await open(`${b.url}${CHAT}`, { method: 'POST', headers: keyed, body })
    expect(opened.statusCode).toBe(200)
    // Answered before the upstream finished: followed, not waited for and replayed.
    expect(shared.mock.completedCalls).toBe(completed)
    const again = await readResponse(opened)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['x-request-id']).toBe(cutOff.requestId)
    const kept = await record(b, cutOff.requestId)
    expect(again.text).toBe(kept.response.stream_raw)
    expect(again.text.startsWith(cutOff.received)).toBe(true)
    expect(shared.mock.requests.filter((r) => r.body.includes('keyed follow elsewhere'))).toHaveLength(1)
  })

  it('serves an SDK retry on process B of a stream whose client left on process A while it runs: one upstream call', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await Promise.all([start('sdk-stream'), start('sdk-stream')])
    const body = chatBody('sdk stream retry elsewhere', { stream: true, mock: { chunks: 30, chunk_delay_ms: 60 } })
    await cutAfterEvents(`${a.url}${CHAT}`, { ...bearer(KEY), 'x-stainless-retry-count': '0' }, body, 2)
    // An SDK waits at least 0.4 s before it retries; here the retry is sent once the first attempt has said it runs.
    await eventually(async () => (await keysMatching(shared.admin, `${RUN}-sdk-stream*run:*`)).length > 0, 10_000)
    const retry = await call(`${b.url}${CHAT}`, { method: 'POST', headers: { ...bearer(KEY), 'x-stainless-retry-count': '1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.text).toContain('"finish_reason":"stop"')
    expect(retry.text).toContain('[DONE]')
    expect(shared.mock.requests.filter((r) => r.body.includes('sdk stream retry elsewhere'))).toHaveLength(1)
  })

  it('cancels on process B a stream running on process A: A stops it and keeps what came as cancelled', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('cancel'), start('cancel')])
    const aborted = shared.mock.abortedStreams
    const cutOff = await cut(a, 'cancel elsewhere', { chunks: 60, chunk_delay_ms: 60 }, 2)
    const answer = await call(`${b.url}/v1/recoveries/${cutOff.requestId}/cancel`, { method: 'POST', headers: bearer(KEY) })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ request_id: cutOff.requestId, cancelled: true, reason: 'cancelled' })
    const kept = await record(b, cutOff.requestId)
    expect(kept.interrupted_reason).toBe('cancelled')
    expect(kept.response.stream_raw).not.toContain('[DONE]')
    await eventually(() => shared.mock.abortedStreams > aborted)
  })

  it('cancels on process B a whole call whose client left on process A: A stops its upstream call', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('whole'), start('whole')])
    const aborted = shared.mock.abortedCalls
    const body = JSON.stringify(chatBody('cancel whole elsewhere', { mock: { delay_ms: 20_000 } }))
    await sendThenAbort(`${a.url}${CHAT}`, { headers: bearer(KEY), body, afterMs: 100 })
    const left = await eventually(() => a.events.find((e) => e.message?.includes('client left a non-streaming call')))
    const requestId = String(left.meta?.requestId)
    // A says it runs only after its first poll; B looks for it longer than that.
    const answer = await call(`${b.url}/v1/recoveries/${requestId}/cancel`, { method: 'POST', headers: bearer(KEY) })
    expect(answer.json).toEqual({ request_id: requestId, cancelled: true, reason: 'cancelled' })
    // Stopped long before the upstream's 20 s answer, and nothing was kept of it.
    await eventually(() => shared.mock.abortedCalls > aborted, 10_000)
    expect((await call(`${b.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY) })).status).toBe(404)
  })
})

await describeWithRedis('What a resumable stream costs in store commands', () => {
  /** A gateway on a Redis of its own (`recovery.streams: finish`), its command counters reset once it answered. */
  async function onOwnRedis(namespace: string, run: (url: string, admin: AdminClient) => Promise<void>): Promise<void> {
    const port = await freePort()
    await startOwnRedis(port)
    const url = `redis://127.0.0.1:${port}`
    const admin: AdminClient = createClient({ url })
    admin.on('error', () => {})
    await admin.connect()
    const mock = await startMockUpstream({ record: false })
    const gateway = createGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      auth: { apiKeys: [KEY_A] },
      store: recommendedKeyv(namespace, url),
      recovery: { streams: 'finish' },
    })
    const server = await serve(nodeHandler(gateway))
    try {
      expect((await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).status).toBe(200)
      await admin.configResetStat()
      await run(server.url, admin)
    } finally {
      await server.close()
      await gateway.close()
      await mock.close()
      admin.destroy()
      await killAllOwnRedis()
    }
  }
  it('an uncut stream under recovery.streams: finish sends Redis nothing, and its events are numbered', { timeout: 60_000 }, async () => {
    await onOwnRedis('stream-cost', async (url, admin) => {
      for (let i = 0; i < 5; i++) {
        const res = await call(`${url}${CHAT}`, { headers: bearer(KEY_A), body: chatBody(`uncut ${i}`, { stream: true }) })
        expect(res.text).toContain('id: 1\n')
      }
      expect([...(await gatewayCommandCalls(admin))]).toEqual([])
    })
  })

  it('a whole call answered soon after its client left costs Redis its record and nothing else', { timeout: 60_000 }, async () => {
    await onOwnRedis('whole-cost', async (url, admin) => {
      const body = JSON.stringify(chatBody('answered soon after', { mock: { delay_ms: 300 } }))
      await sendThenAbort(`${url}${CHAT}`, { headers: bearer(KEY_A), body, afterMs: 50 })
      await eventually(async () => ((await call(`${url}/v1/recoveries`, { headers: bearer(KEY_A) })).json as { count: number }).count === 1)
      const sent = await gatewayCommandCalls(admin)
      // The record's one transaction (three values, its index entry, the index's expiry and size), then the lists
      // polled above: no journal head written or removed, no cancel looked for.
      expect(sent.get('set')).toBe(3)
      expect(sent.has('get')).toBe(false)
      expect(sent.has('del') || sent.has('unlink')).toBe(false)
    })
  })
})
