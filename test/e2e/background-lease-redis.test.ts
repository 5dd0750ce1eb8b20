// A Redis outage longer than a background call's lease, on a private Redis (with AOF, so it comes back with its
// data) killed by its process and started again: the process running the call is only cut off, not gone. Readers
// must not give the call up while its holder may come back, the holder must not write over a state readers gave up,
// and either way the upstream is called once and every reader ends with the same state.
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient } from '@keyv/redis'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway } from '../../src/gateway.js'
import { eventData } from '../../src/sse/parse.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import {
  type AdminClient,
  describeWithRedis,
  keysMatching,
  killAllOwnRedis,
  killOwnRedis,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { serve } from '../support/servers.js'
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js'

/** The lease of both gateways: an outage of OUTAGE_MS outlasts it. */
const LEASE_MS = 2000
const OUTAGE_MS = 3500

interface Started {
  url: string
  close(): Promise<void>
}

interface Event {
  type: string
  sequence_number: number
  response?: { status?: string; error?: { message?: string } | null }
}

await describeWithRedis('A Redis outage longer than a background lease', () => {
  let mock: MockUpstream
  let port: number
  let dir: string
  let redis: ChildProcess
  const open: Started[] = []
  const relays: TcpRelay[] = []

  /** A private Redis that keeps every write on disk at once, so a kill loses nothing the gateways were told it took. */
  const startRedis = () => startOwnRedis(port, { args: ['--appendonly', 'yes', '--appendfsync', 'always'], cwd: dir })

  beforeAll(async () => {
    mock = await startMockUpstream()
  })

  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()))
    await Promise.all(relays.splice(0).map((relay) => relay.close()))
    await killAllOwnRedis()
    await rm(dir, { recursive: true, force: true })
  })

  afterAll(async () => {
    await mock?.close()
  })

  /** A gateway on the private Redis through `url`, connected once (a lost connection then fails at once). */
  async function start(url: string): Promise<Started> {
    const gateway = createGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      auth: { apiKeys: [KEY_A] },
      store: recommendedKeyv('bg-lease', url),
      background: { leaseMs: LEASE_MS },
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    })
    const server = await serve(nodeHandler(gateway))
    expect((await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).status).toBe(200)
    const started = {
      url: server.url,
      async close() {
        await server.close()
        await gateway.close({ timeoutMs: 2000 })
      },
    }
    open.push(started)
    return started
  }

  /** A, which runs the calls, through a relay that can keep it cut off after Redis is back; B straight on Redis. */
  async function twoProcesses(): Promise<{ a: Started; b: Started; relay: TcpRelay }> {
    port = await freePort()
    dir = await mkdtemp(join(tmpdir(), 'mg-bg-lease-'))
    redis = await startRedis()
    const relay = await startTcpRelay('redis', '127.0.0.1', port)
    relays.push(relay)
    return { a: await start(relay.url), b: await start(`redis://127.0.0.1:${port}`), relay }
  }

  const create = async (gw: Started, input: string) => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', input, background: true })
    const res = await call(`${gw.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    return (res.json as { id: string }).id
  }
  const retrieve = async (gw: Started, id: string) => {
    const res = await call(`${gw.url}/v1/responses/${id}`, { headers: bearer(KEY_A) })
    return { status: res.status, object: res.json as Record<string, unknown> & { status?: string; error?: { message?: string } } }
  }
  const stream = async (gw: Started, id: string): Promise<Event[]> => {
    const res = await call(`${gw.url}/v1/responses/${id}?stream=true`, { headers: bearer(KEY_A) })
    return eventData(res.text).map((data) => JSON.parse(data) as Event)
  }
  const upstreamCalls = (input: string) => mock.requests.filter((r) => r.body.includes(input)).length
  /** Retrieves on B every 100 ms until `stop` resolves; the statuses it answered with (503 while Redis is down). */
  const watch = (gw: Started, id: string, stop: Promise<unknown>) => {
    const seen: string[] = []
    let done = false
    void stop.then(() => (done = true))
    const looking = (async () => {
      while (!done) {
        const { status, object } = await retrieve(gw, id)
        seen.push(status === 200 ? String(object.status) : String(status))
        await sleep(100)
      }
      return seen
    })()
    return looking
  }
  /** Every reader's end, on both processes: retrieves, replays, and the live follower started before the outage. */
  async function sameEverywhere(a: Started, b: Started, id: string, live: Event[]) {
    const [onA, onB] = [await retrieve(a, id), await retrieve(b, id)]
    expect(onA.status).toBe(200)
    expect(onA.object).toEqual(onB.object)
    const [replayA, replayB] = [await stream(a, id), await stream(b, id)]
    expect(replayA).toEqual(replayB)
    expect(replayA.at(-1)?.type).toBe(`response.${onA.object.status}`)
    expect(live.at(-1)?.type).toBe(`response.${onA.object.status}`)
    expect(live.at(-1)?.response?.status).toBe(onA.object.status)
    return { object: onA.object, replay: replayA }
  }

  /**
   * A background call created on A and followed live on B, then Redis killed for OUTAGE_MS with A cut off from it
   * (behind its relay, still down when Redis is back); `steer` is the upstream's pace.
   */
  async function outageOverCall(input: string, steer: { chunks: number; chunk_delay_ms: number }) {
    const { a, b, relay } = await twoProcesses()
    mock.steer(input, steer)
    const id = await create(a, input)
    const live = stream(b, id)
    await sleep(500)
    relay.down()
    await killOwnRedis(redis)
    await sleep(OUTAGE_MS)
    redis = await startRedis()
    return { a, b, relay, id, live }
  }

  it('a holder cut off past its lease comes back and keeps the call: readers never give it up, the answer is kept', async () => {
    const input = 'bg lease outlived, holder back'
    // About 2 s of events: the upstream finishes while Redis is down.
    const { a, b, relay, id, live } = await outageOverCall(input, { chunks: 40, chunk_delay_ms: 50 })
    // B is back at once and finds the lease passed; A stays cut off a while longer, within the lease readers wait.
    const released = sleep(1000)
    const statuses = watch(
      b,
      id,
      released.then(() => sleep(2000)),
    )
    await released
    relay.up()
    const seenOnB = await statuses
    // B found the lease passed (and noted so in the store), and the call never read failed meanwhile.
    expect(seenOnB).not.toContain('failed')
    const admin: AdminClient = createClient({ url: `redis://127.0.0.1:${port}` })
    await admin.connect()
    const noted = await keysMatching(admin, '*bgseen:*')
    await admin.quit()
    expect(noted.length).toBeGreaterThan(0)
    const done = await eventually(async () => ((await retrieve(b, id)).object.status === 'completed' ? true : undefined), 15_000)
    expect(done).toBe(true)
    const { object, replay } = await sameEverywhere(a, b, id, await live)
    expect(object.status).toBe('completed')
    // The whole answer is kept: every event the upstream sent, in order, none missing.
    expect(replay.map((e) => e.sequence_number)).toEqual(replay.map((_, i) => i))
    expect(replay.filter((e) => e.type === 'response.output_text.delta').length).toBeGreaterThanOrEqual(40)
    expect(upstreamCalls(input)).toBe(1)
  }, 60_000)

  it('a holder cut off for a lease after readers saw its lease passed is given up: it stops and writes nothing more', async () => {
    const input = 'bg lease outlived, holder late'
    // Still running when A comes back, however slow the machine: about 60 s of events, cut short by A's stop.
    const { a, b, relay, id, live } = await outageOverCall(input, { chunks: 1200, chunk_delay_ms: 50 })
    // A stays cut off past the lease readers wait after B first saw it passed: B gives the call up.
    const failed = await eventually(async () => {
      const { object } = await retrieve(b, id)
      return object.status === 'failed' ? object : undefined
    }, 10_000)
    expect(failed.error?.message).toMatch(/gateway process running this response stopped.*could not reach the store/)
    const aborted = mock.abortedStreams
    relay.up()
    // A comes back, finds the call given up, and stops its upstream call without writing anything more.
    await mock.waitFor(() => mock.abortedStreams > aborted, 10_000)
    await sleep(1000)
    const { object } = await sameEverywhere(a, b, id, await live)
    expect(object).toEqual(failed)
    expect(upstreamCalls(input)).toBe(1)
  }, 60_000)
})
