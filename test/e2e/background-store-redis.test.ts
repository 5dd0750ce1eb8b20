import { setTimeout as sleep } from 'node:timers/promises'
import { createClient } from '@keyv/redis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway } from '../../src/gateway.js'
import { eventData } from '../../src/sse/parse.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { type AdminClient, describeWithRedis, keysMatching, killAllOwnRedis, recommendedKeyv, startOwnRedis } from '../support/redis.js'
import { serve } from '../support/servers.js'
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js'

// Background responses on a Redis of their own: what a short outage does to a call's kept events and last state, a
// delete seen by every process at once, and how many bytes a large request costs the store while the call runs.

const MB = 1000 * 1000

interface Started {
  url: string
  close(): Promise<void>
}

await describeWithRedis('Background responses and their store', () => {
  let redisUrl: string
  let admin: AdminClient
  let relay: TcpRelay
  let mock: MockUpstream
  const open: Started[] = []

  beforeAll(async () => {
    const port = await freePort()
    await startOwnRedis(port)
    redisUrl = `redis://127.0.0.1:${port}`
    relay = await startTcpRelay('redis', '127.0.0.1', port)
    admin = createClient({ url: redisUrl })
    admin.on('error', () => {})
    await admin.connect()
    mock = await startMockUpstream({ record: false })
  }, 60_000)

  afterAll(async () => {
    for (const gw of open) await gw.close()
    await admin.quit()
    await relay.close()
    await mock.close()
    await killAllOwnRedis()
  })

  /** A gateway process on the shared store `namespace`, through `url` (the relay, or the server itself). */
  const start = async (namespace: string, url: string, overrides: Partial<GatewayOptions> = {}): Promise<Started> => {
    const gateway = createGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      auth: { apiKeys: [KEY_A] },
      store: recommendedKeyv(namespace, url),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      ...overrides,
    })
    const server = await serve(nodeHandler(gateway))
    const started = {
      url: server.url,
      async close() {
        await server.close()
        await gateway.close()
      },
    }
    open.push(started)
    return started
  }
  const create = async (gw: Started, input: string, extra: Record<string, unknown> = {}) => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', input, background: true, ...extra })
    const res = await call(`${gw.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    return { id: (res.json as { id: string }).id, bytes: Buffer.byteLength(body) }
  }
  const retrieve = (gw: Started, id: string) => call(`${gw.url}/v1/responses/${id}`, { headers: bearer(KEY_A) })
  const stream = async (gw: Started, id: string) => {
    const res = await call(`${gw.url}/v1/responses/${id}?stream=true`, { headers: bearer(KEY_A) })
    return eventData(res.text).map((data) => JSON.parse(data) as { type: string; sequence_number: number })
  }

  it('a store outage while a call runs loses none of its events, nor its last state: the replay is what was live', async () => {
    const gw = await start('bg-outage', relay.url, { background: { leaseMs: 6000 } })
    mock.steer('bg through an outage', { chunks: 60, chunk_delay_ms: 50 })
    const { id } = await create(gw, 'bg through an outage')
    const live = stream(gw, id)
    await sleep(800)
    // The store is out of reach for 2.5 s, through the call's end: its segments and its last state wait.
    relay.down()
    await sleep(2500)
    relay.up()
    const liveEvents = await live
    expect(liveEvents.at(-1)?.type).toBe('response.completed')
    const done = await eventually(async () => {
      const res = await retrieve(gw, id)
      const status = (res.json as { status?: string }).status
      return res.status === 200 && status !== 'queued' && status !== 'in_progress' ? status : undefined
    }, 20_000)
    expect(done).toBe('completed')
    const replayed = await stream(gw, id)
    expect(replayed.map((e) => e.sequence_number)).toEqual(liveEvents.map((e) => e.sequence_number))
    expect(replayed.map((e) => e.type)).toEqual(liveEvents.map((e) => e.type))
  }, 60_000)

  it('a replay over kept events with a hole ends with an error naming it, never with response.completed', async () => {
    const gw = await start('bg-hole', redisUrl)
    mock.steer('bg with a hole', { chunks: 30, chunk_delay_ms: 40 })
    const { id } = await create(gw, 'bg with a hole')
    const live = await stream(gw, id)
    await eventually(async () => (await retrieve(gw, id)).json?.status === 'completed', 10_000)
    // Its last state written, too: until then the process that ran it still serves its events from memory (a retrieve
    // says `completed` as soon as the call ended), and a replay there would show no hole. Seen once under load.
    const requestId = id.slice('resp_'.length)
    await eventually(async () => {
      const [head] = await keysMatching(admin, `*bg:${requestId}`)
      return head !== undefined && ((await admin.get(head)) ?? '').includes('"status":"completed"')
    }, 10_000)
    // One segment in the middle is gone, as an eviction or an expiry would leave it.
    const segments = await keysMatching(admin, `*bg:${requestId}:*`)
    expect(segments.length).toBeGreaterThan(2)
    await admin.del(segments.find((key) => key.endsWith(':1')) as string)
    const replayed = (await call(`${gw.url}/v1/responses/${id}?stream=true`, { headers: bearer(KEY_A) })).text
    const events = eventData(replayed).map((data) => JSON.parse(data) as { type: string; code?: string; sequence_number: number })
    expect(events.length).toBeLessThan(live.length)
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'events_lost' })
    expect(events.some((e) => e.type === 'response.completed')).toBe(false)
  }, 60_000)

  it('once DELETE answered on one process, no process serves the call, though another still runs it', async () => {
    const [a, b] = [await start('bg-delete', redisUrl), await start('bg-delete', redisUrl)]
    for (let round = 0; round < 3; round++) {
      mock.steer(`bg deleted elsewhere ${round}`, { chunks: 100, chunk_delay_ms: 30 })
      const { id } = await create(a, `bg deleted elsewhere ${round}`)
      await sleep(300)
      const deleted = await call(`${b.url}/v1/responses/${id}`, { method: 'DELETE', headers: bearer(KEY_A) })
      expect(deleted.status).toBe(200)
      const seen: number[] = []
      for (let i = 0; i < 15; i++) {
        seen.push((await retrieve(b, id)).status, (await retrieve(a, id)).status)
        await sleep(50)
      }
      expect(seen.every((status) => status === 404)).toBe(true)
    }
  }, 60_000)

  it('a create with 10 MB of instructions costs the store a few times its size, not a copy per tick', async () => {
    const [a, b] = [await start('bg-large', redisUrl), await start('bg-large', redisUrl)]
    mock.steer('bg large instructions', { chunks: 40, chunk_delay_ms: 50 })
    await admin.configResetStat()
    const { id, bytes } = await create(a, 'bg large instructions', { instructions: 'i'.repeat(10 * MB) })
    // Followed from another process, which reads the store as the call goes.
    const events = await stream(b, id)
    expect(events.at(-1)?.type).toBe('response.completed')
    await eventually(async () => (await retrieve(b, id)).json?.status === 'completed', 10_000)
    const info = await admin.info('stats')
    const stat = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1])
    const written = stat('total_net_input_bytes') / bytes
    const read = stat('total_net_output_bytes') / bytes
    console.log('background-store: bytes written to Redis per request byte', written.toFixed(2), 'read', read.toFixed(2))
    expect(written).toBeLessThanOrEqual(5)
    expect(read).toBeLessThanOrEqual(5)
  }, 60_000)
})
