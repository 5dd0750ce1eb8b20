// A Redis outage of a few seconds, on a private Redis stopped and started again by its process: no kept answer is
// lost, and no Idempotency-Key runs twice.
import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient } from '@keyv/redis'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway, type LoggedLine } from '../support/collecting-gateway.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import {
  type AdminClient,
  describeWithRedis,
  gatewayCommandCalls,
  killAllOwnRedis,
  killOwnRedis,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { serve } from '../support/servers.js'

const HELD = 'model-gateway: recovery record held in memory until the store takes writes again'
const LOST = 'model-gateway: recovery record could not be stored'

interface Running {
  url: string
  logs: LoggedLine[]
  close(): Promise<void>
}

await describeWithRedis('A Redis outage keeps the promise', () => {
  let mock: MockUpstream
  let port: number
  let redis: ChildProcess
  const running: Running[] = []
  const redisUrl = () => `redis://127.0.0.1:${port}`

  beforeAll(async () => {
    mock = await startMockUpstream()
  })

  afterEach(async () => {
    await Promise.all(running.splice(0).map((gw) => gw.close()))
    await killAllOwnRedis()
  })

  afterAll(async () => {
    await mock?.close()
  })

  /** A gateway in this process on the private Redis, set up as the Redis guide advises. */
  async function start(namespace: string, overrides: Partial<GatewayOptions> = {}): Promise<Running> {
    const { gateway, logs } = collectingGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      store: recommendedKeyv(namespace, redisUrl()),
      ...overrides,
    })
    const server: MountedServer = await serve(nodeHandler(gateway))
    // Connected once: from now on a lost connection fails at once, as in a gateway that has been up a while.
    expect((await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).status).toBe(200)
    const gw = {
      url: server.url,
      logs,
      close: async () => {
        await server.close()
        await gateway.close({ timeoutMs: 2000 })
      },
    }
    running.push(gw)
    return gw
  }

  const upstreamCalls = (content: string) => mock.requests.filter((r) => r.body.includes(content)).length
  const keyed = (gw: Running, content: string, key: string) =>
    call(`${gw.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'idempotency-key': key }, body: chatBody(content) })
  const interrupt = (gw: Running, content: string) =>
    sendThenAbort(`${gw.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody(content, { mock: { delay_ms: 800 } })),
      afterMs: 30,
    })
  const lines = (gw: Running, message: string) => gw.logs.filter((line) => line.message === message)
  const listed = async (gw: Running) => (await call(`${gw.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json

  it('holds the records it could not write while Redis is down and writes them once it is back', { timeout: 90_000 }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const gw = await start(`outage-held-${port}`)
    const few = await start(`outage-few-${port}`, { recovery: { maxPendingRecords: 2 } })
    const small = await start(`outage-small-${port}`, { recovery: { maxPendingBytes: 1024 } })

    // Cut off while their upstream calls run; Redis stops before any of them answers, and stays down past the
    // writer's retries (every record is then held).
    const contents = Array.from({ length: 5 }, (_, i) => `held-${i}`)
    await Promise.all([
      ...contents.map((content) => interrupt(gw, content)),
      ...contents.map((content) => interrupt(few, `few-${content}`)),
      interrupt(small, 'too large to hold'),
    ])
    await killOwnRedis(redis)
    await eventually(() => lines(gw, HELD).length === contents.length, 30_000)
    await eventually(() => lines(few, HELD).length === contents.length && lines(few, LOST).length === 3, 30_000)
    await eventually(() => lines(small, LOST).length === 1, 30_000)
    expect(lines(small, LOST)[0]?.meta?.reason).toMatch(/recovery\.maxPendingBytes/)
    expect(lines(few, LOST).every((line) => /recovery\.maxPendingRecords/.test(String(line.meta?.reason)))).toBe(true)
    // Nothing was lost by the gateway with room for them all.
    expect(lines(gw, LOST)).toEqual([])

    redis = await startOwnRedis(port)
    const all = await eventually(async () => {
      const list = await listed(gw)
      return list?.count === contents.length ? list : undefined
    }, 30_000)
    const held = new Set(lines(gw, HELD).map((line) => line.meta?.requestId))
    expect(new Set(all.items.map((item: { request_id: string }) => item.request_id))).toEqual(held)
    // The bounded one kept the newest two it held; the oldest three were dropped and logged with their ids.
    const kept = await eventually(async () => {
      const list = await listed(few)
      return list?.count === 2 ? list : undefined
    }, 30_000)
    const dropped = new Set(lines(few, LOST).map((line) => line.meta?.requestId))
    for (const item of kept.items) expect(dropped.has(item.request_id)).toBe(false)
    expect((await listed(small)).count).toBe(0)
    void redis
  })

  it('holds nothing a store that answers refused: a record past the owner quota is logged as lost at once', async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const gw = await start(`outage-refused-${port}`, { store: undefined, recovery: { maxBytesPerOwner: 4096 } })
    await interrupt(gw, 'x'.repeat(8192))
    await eventually(() => lines(gw, LOST).length === 1, 30_000)
    expect(lines(gw, HELD)).toEqual([])
  })

  it('logs each record still held as lost when the gateway closes with Redis down', { timeout: 60_000 }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const gw = await start(`outage-close-${port}`)
    await Promise.all(['closing-1', 'closing-2'].map((content) => interrupt(gw, content)))
    await killOwnRedis(redis)
    await eventually(() => lines(gw, HELD).length === 2, 30_000)
    await gw.close()
    const lost = lines(gw, LOST)
    expect(new Set(lost.map((line) => line.meta?.requestId))).toEqual(new Set(lines(gw, HELD).map((line) => line.meta?.requestId)))
    expect(lost.every((line) => /gateway closed/.test(String(line.meta?.reason)))).toBe(true)
  })

  it('never runs a repeated Idempotency-Key unguarded: waits for Redis, then 503 with retry-after', { timeout: 90_000 }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const refusing = await start(`outage-keys-${port}`, { idempotency: { storeWaitMs: 300 } })
    const waiting = await start(`outage-wait-${port}`, { idempotency: { storeWaitMs: 60_000 } })
    const open = await start(`outage-open-${port}`, { idempotency: { storeWaitMs: 0, failOpen: true } })

    const first = await keyed(refusing, 'paid once', 'k-once')
    expect(first.status).toBe(200)
    expect(upstreamCalls('paid once')).toBe(1)
    await killOwnRedis(redis)

    // The key's answer is in Redis: the repeat cannot be served, and it is not paid for again.
    const again = await keyed(refusing, 'paid once', 'k-once')
    expect(again.status).toBe(503)
    expect(again.json.error.code).toBe('store_unavailable')
    expect(again.headers['retry-after']).toBe('1')
    expect(upstreamCalls('paid once')).toBe(1)

    // So does an OpenAI SDK sending the key (told not to retry, to see the answer it got).
    const sdk = new OpenAI({ apiKey: KEY_A, baseURL: `${refusing.url}/v1`, maxRetries: 0 })
    const refused = await sdk.chat.completions
      .create(chatBody('paid once') as never, { headers: { 'Idempotency-Key': 'k-once' } })
      .catch((e) => e)
    expect(refused).toBeInstanceOf(OpenAI.APIError)
    expect(refused.status).toBe(503)
    expect(refused.code).toBe('store_unavailable')
    expect(upstreamCalls('paid once')).toBe(1)

    // With `failOpen` the call runs (and says so in a warn line).
    const ran = await keyed(open, 'runs open', 'k-open')
    expect(ran.status).toBe(200)
    expect(upstreamCalls('runs open')).toBe(1)
    expect(open.logs.some((line) => /could not be claimed.*the call runs/.test(line.message))).toBe(true)

    // A keyed call waits for Redis within `storeWaitMs`: it goes upstream once Redis is back, not before.
    let settled = false
    const pending = keyed(waiting, 'waits for redis', 'k-wait').finally(() => {
      settled = true
    })
    await sleep(500)
    expect(settled).toBe(false)
    expect(upstreamCalls('waits for redis')).toBe(0)
    redis = await startOwnRedis(port)
    const late = await pending
    expect(late.status).toBe(200)
    expect(upstreamCalls('waits for redis')).toBe(1)
    // And its key is guarded again: a repeat replays.
    const replay = await keyed(waiting, 'waits for redis', 'k-wait')
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('waits for redis')).toBe(1)
  })

  it('writes the answer of a keyed call that ended while Redis was down once it is back: a repeat replays it', {
    timeout: 90_000,
  }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const gw = await start(`outage-settle-${port}`)
    const body = chatBody('ends during the outage', { mock: { delay_ms: 1500 } })
    const post = () => call(`${gw.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'idempotency-key': 'k-settle' }, body })
    // Claimed while Redis is up; Redis goes down while the upstream works, so the answer cannot be written.
    const first = post()
    await eventually(() => upstreamCalls('ends during the outage') === 1, 10_000)
    await killOwnRedis(redis)
    expect((await first).status).toBe(200)
    const held = 'model-gateway: the outcome of an idempotency key held in memory until the store takes writes again'
    await eventually(() => lines(gw, held).length === 1, 30_000)

    redis = await startOwnRedis(port)
    await eventually(
      () => lines(gw, 'model-gateway: the outcome of an idempotency key stored after the store came back').length === 1,
      30_000,
    )
    const again = await post()
    expect(again.status).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.text).toBe((await first).text)
    expect(upstreamCalls('ends during the outage')).toBe(1)
  })

  it('with limits, a store known down fails open or closed at once instead of being asked again by every call', {
    timeout: 120_000,
  }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const admin: AdminClient = createClient({ url: redisUrl() })
    admin.on('error', () => {})
    await admin.connect()
    const owners = { requestsPerMinute: 10_000 }
    const open = await start(`outage-limits-open-${port}`, { limits: { owners } })
    const closed = await start(`outage-limits-closed-${port}`, { limits: { owners, failClosed: true } })
    const chat = (gw: Running, content: string) =>
      call(`${gw.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody(content) })
    for (const gw of [open, closed]) expect((await chat(gw, 'metered')).headers['x-ratelimit-limit-requests']).toBe('10000')
    const scripts = async () => {
      const calls = await gatewayCommandCalls(admin)
      return (calls.get('evalsha') ?? 0) + (calls.get('eval') ?? 0)
    }
    const before = await scripts()

    // A Redis that stops answering without closing its connections: each check that reaches it waits out the
    // ledger's deadline, and its command runs once Redis wakes up.
    redis.kill('SIGSTOP')
    const calls = 10
    for (let i = 0; i < calls; i++) {
      const res = await chat(open, `open ${i}`)
      expect(res.status).toBe(200)
      expect(res.headers['x-ratelimit-limit-requests']).toBeUndefined()
    }
    for (let i = 0; i < calls; i++) {
      const res = await chat(closed, `closed ${i}`)
      expect(res.status).toBe(503)
      expect(res.json.error.code).toBe('store_unavailable')
      expect(res.headers['retry-after']).toBe('1')
    }
    redis.kill('SIGCONT')

    // Only the first call of each gateway (and a probe now and then) asked Redis: not every check and every charge.
    const sent = (await scripts()) - before
    expect(sent).toBeLessThan(calls)
    for (const gw of [open, closed]) {
      expect(gw.logs.filter((line) => /rate-limit store failed/.test(line.message))).toHaveLength(1)
      // Back: checked and metered again once a probe found Redis answering.
      await eventually(async () => (await chat(gw, 'back')).headers['x-ratelimit-limit-requests'] === '10000', 15_000)
    }
    admin.destroy()
  })

  it('a cache on a Redis that stops answering: the lookup gives up at its deadline and the call goes upstream', {
    timeout: 60_000,
  }, async () => {
    port = await freePort()
    redis = await startOwnRedis(port)
    const gw = await start(`outage-cache-${port}`, { cache: {} })
    const chat = (content: string) => call(`${gw.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody(content) })
    expect((await chat('cached')).headers['x-model-gateway-cache']).toBe('miss')
    await eventually(async () => (await chat('cached')).headers['x-model-gateway-cache'] === 'hit', 5_000)

    redis.kill('SIGSTOP')
    const started = performance.now()
    const res = await chat('looked up while Redis sleeps')
    const waited = performance.now() - started
    redis.kill('SIGCONT')
    expect(res.status).toBe(200)
    expect(res.headers['x-model-gateway-cache']).toBe('miss')
    expect(upstreamCalls('looked up while Redis sleeps')).toBe(1)
    // The lookup's deadline is 2 s, swept every 200 ms: never an answer held up without end.
    expect(waited).toBeGreaterThanOrEqual(1_900)
    expect(waited).toBeLessThan(10_000)
    expect(lines(gw, 'model-gateway: the cache could not be read; the call goes upstream')).toHaveLength(1)
  })
})
