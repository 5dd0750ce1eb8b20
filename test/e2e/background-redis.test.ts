import { expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { eventData as dataEvents } from '../../src/sse/parse.js'
import { bearer } from '../support/fixture.js'
import { type GatewayProcess, startGatewayProcess, useProcessesOnRedis } from '../support/gateway-process.js'
import { call, eventually } from '../support/http.js'
import { describeWithRedis, REDIS_URL, recommendedKeyv } from '../support/redis.js'
import { serve } from '../support/servers.js'

// Background responses across gateway processes on one Redis: any process serves any id, and a process killed
// mid-call leaves a state that says so.

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-background-${process.pid}-${Date.now().toString(36)}`
const KEY = 'sk-background-owner'
const OTHER = 'sk-background-other'

interface ResponseObject {
  id: string
  status: string
  output: Array<{ content?: Array<{ text?: string }> }>
  error: { message: string } | null
}

await describeWithRedis('Background responses across gateway processes on one Redis', () => {
  const shared = useProcessesOnRedis(RUN)
  const start = (namespace: string) =>
    startGatewayProcess({
      redisUrl: REDIS_URL,
      namespace: `${RUN}-${namespace}`,
      upstreamUrl: shared.mock.url,
      apiKeys: [KEY, OTHER],
      background: { leaseMs: 1000 },
    })
  const create = async (gw: GatewayProcess, input: string, mock: Record<string, unknown>, model = 'gpt-4o-mini') => {
    // Steered by its input: a translated request may carry no field the mock alone reads.
    shared.mock.steer(input, mock)
    const res = await call(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...bearer(KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ model, input, background: true }),
    })
    expect(res.status).toBe(200)
    return res.json as ResponseObject
  }
  const retrieve = async (gw: GatewayProcess, id: string, key = KEY) => call(`${gw.url}/v1/responses/${id}`, { headers: bearer(key) })
  const until = (gw: GatewayProcess, id: string, status: string) =>
    eventually(async () => {
      const now = (await retrieve(gw, id)).json as ResponseObject
      return now.status === status ? now : undefined
    }, 15_000)

  it('created on A, followed live and retrieved on B, for a passthrough and a translated model', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('shared'), start('shared')])
    for (const model of ['gpt-4o-mini', 'gemini-2.5-flash']) {
      const input = `bg across ${model}`
      const created = await create(a, input, { chunks: 12, chunk_delay_ms: 40 }, model)
      // Right after the create answered, B finds it: the create waited for its state to be stored.
      expect((await retrieve(b, created.id)).status).toBe(200)
      const live = await call(`${b.url}/v1/responses/${created.id}?stream=true`, { headers: bearer(KEY) })
      const events = dataEvents(live.text).map((data) => JSON.parse(data) as { type: string; sequence_number: number; delta?: string })
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
      expect(events[0]?.type).toBe('response.created')
      expect(events.at(-1)?.type).toBe('response.completed')
      expect(events.map((e) => e.delta ?? '').join('')).toBe(`Echo: ${input}`)
      const done = await until(b, created.id, 'completed')
      expect(done.output[0]?.content?.[0]?.text).toBe(`Echo: ${input}`)
      // Replayed on B from a sequence number once it ended.
      const after = await call(`${b.url}/v1/responses/${created.id}?stream=true&starting_after=${events.length - 3}`, {
        headers: bearer(KEY),
      })
      expect(dataEvents(after.text).map((data) => JSON.parse(data).sequence_number)).toEqual([events.length - 2, events.length - 1])
      // Another owner finds nothing, on either process.
      expect((await retrieve(b, created.id, OTHER)).status).toBe(404)
      // Billed once, by the process that ran it.
      const requestId = created.id.slice('resp_'.length)
      await eventually(() => a.events.some((e) => e.usage?.requestId === requestId))
      expect([...a.events, ...b.events].filter((e) => e.usage?.requestId === requestId)).toHaveLength(1)
    }
  })

  it('a cancel on B stops the call A runs: its upstream request ends', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('cancel'), start('cancel')])
    const input = 'bg cancel across'
    const aborted = shared.mock.abortedStreams + shared.mock.abortedCalls
    const created = await create(a, input, { hang: true })
    await eventually(() => shared.mock.requests.some((r) => r.body.includes(input)))
    const cancelled = await call(`${b.url}/v1/responses/${created.id}/cancel`, { method: 'POST', headers: bearer(KEY) })
    expect(cancelled.json).toMatchObject({ id: created.id, status: 'cancelled' })
    await shared.mock.waitFor(() => shared.mock.abortedStreams + shared.mock.abortedCalls > aborted, 10_000)
  })

  it('a gateway that closes past its timeout leaves its running call failed, saying it shut down, for the others', {
    timeout: 60_000,
  }, async () => {
    const namespace = `${RUN}-closing`
    const quiet = { info: () => {}, warn: () => {}, error: () => {} }
    const closing = createGateway({
      upstreams: { mock: { type: 'openai', baseUrl: `${shared.mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
      auth: { apiKeys: [KEY] },
      store: recommendedKeyv(namespace),
      logger: quiet,
    })
    const server = await serve(nodeHandler(closing))
    const b = await startGatewayProcess({ redisUrl: REDIS_URL, namespace, upstreamUrl: shared.mock.url, apiKeys: [KEY] })
    try {
      const input = 'bg closing gateway'
      const created = await create({ url: server.url } as GatewayProcess, input, { hang: true })
      await eventually(() => shared.mock.requests.some((r) => r.body.includes(input)))
      await closing.close({ timeoutMs: 50 })
      const failed = (await retrieve(b, created.id)).json as ResponseObject
      expect(failed.status).toBe('failed')
      expect(failed.error?.message).toMatch(/gateway shut down/)
    } finally {
      await server.close()
    }
  })

  it('a process killed mid-call leaves a state that says so: failed, the process stopped', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('killed'), start('killed')])
    const input = 'bg killed mid-call'
    const created = await create(a, input, { hang: true })
    await eventually(() => shared.mock.requests.some((r) => r.body.includes(input)))
    expect(((await retrieve(b, created.id)).json as ResponseObject).status).toMatch(/^(queued|in_progress)$/)
    a.child.kill('SIGKILL')
    const failed = await until(b, created.id, 'failed')
    expect(failed.error?.message).toMatch(/gateway process running this response stopped/)
    // A stream of it on B ends too, with the failure, rather than waiting forever.
    const stream = await call(`${b.url}/v1/responses/${created.id}?stream=true`, { headers: bearer(KEY) })
    expect(dataEvents(stream.text).map((data) => JSON.parse(data).type)).toEqual(['response.created', 'response.failed'])
  })
})
