import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { startMockUpstream } from '../../src/testing/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer } from '../support/fixture.js'
import { ensureBuilt, startGatewayProcess, stopAllGatewayProcesses } from '../support/gateway-process.js'
import { call, eventually, type TestResponse } from '../support/http.js'
import {
  type AdminClient,
  connectAdmin,
  describeWithRedis,
  dropKeys,
  keysMatching,
  killAllOwnRedis,
  killOwnRedis,
  REDIS_URL,
  startOwnRedis,
} from '../support/redis.js'
import { contentOf, interrupt, KEY, recoveries, twoProcessStorm, usages, waitForUsages } from '../support/redis-storm.js'

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-e2e-${process.pid}-${Date.now().toString(36)}`
const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'
const LAYOUT = /^(?:rec:\{([0-9a-f]{32})\}:[0-9A-HJKMNP-TV-Z]{26}(?::req|:res)?|(?:idx|ord):\{([0-9a-f]{32})\})$/
const STORE_FAILED = 'model-gateway: recovery record could not be stored'
const HELD = 'model-gateway: recovery record held in memory until the store takes writes again'

/** A does-not-hang bound: generous, so a loaded machine never trips it. */
async function answered(what: string, pending: Promise<TestResponse>, ms = 20_000): Promise<TestResponse> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([pending, hang])
  } finally {
    clearTimeout(timer)
  }
}

await describeWithRedis('Redis end to end (gateway processes)', () => {
  let admin: AdminClient | undefined
  let mock: Awaited<ReturnType<typeof startMockUpstream>> | undefined
  const settings = (namespace: string, extra: { apiKeys?: string[]; ttlMs?: number; redisUrl?: string } = {}) => ({
    redisUrl: extra.redisUrl ?? REDIS_URL,
    namespace: `${RUN}-${namespace}`,
    upstreamUrl: mock!.url,
    apiKeys: extra.apiKeys ?? [KEY],
    ttlMs: extra.ttlMs,
  })

  beforeAll(async () => {
    await ensureBuilt()
    admin = await connectAdmin()
    mock = await startMockUpstream({ record: false })
  }, 240_000)

  afterEach(async () => {
    await stopAllGatewayProcesses()
    await killAllOwnRedis()
  })

  afterAll(async () => {
    await stopAllGatewayProcesses()
    await killAllOwnRedis()
    if (admin?.isOpen) {
      await dropKeys(admin, `${RUN}*`)
      admin.destroy()
    }
    await mock?.close()
  })

  it('keeps 200 interruptions spread over two processes as exactly 200 records, each listed once and readable through both', {
    timeout: 120_000,
  }, async () => {
    const [a, b] = await Promise.all([startGatewayProcess(settings('share')), startGatewayProcess(settings('share'))])
    await twoProcessStorm(a, b, async () => (await keysMatching(admin!, `${RUN}-share::*`)).length)
  })

  it('shows records written before a restart to the restarted gateway', async () => {
    const first = await startGatewayProcess(settings('restart'))
    await Promise.all(['r-1', 'r-2', 'r-3'].map((content) => interrupt(first, content)))
    await waitForUsages(first, 3)
    const before = (await recoveries(first)).json
    expect(before.count).toBe(3)
    expect(await first.stop()).toBe(0)
    expect(first.events.some((e) => e.closed)).toBe(true)

    const second = await startGatewayProcess(settings('restart'))
    expect((await recoveries(second)).json).toEqual(before)
    const detail = await recoveries(second, `/${before.items[0].request_id}`)
    expect(detail.status).toBe(200)
    expect(['r-1', 'r-2', 'r-3']).toContain(contentOf(detail.json))
  })

  it('keeps keys differing only in ":" and "*" apart, and builds every Redis key from hex owner ids', async () => {
    const keys = ['sk-a:b', 'sk-a*b', 'sk-a:*', 'sk-a?b[c]{d}']
    const gw = await startGatewayProcess(settings('keys', { apiKeys: keys }))
    await Promise.all(keys.flatMap((key, k) => Array.from({ length: k + 1 }, (_, j) => interrupt(gw, `${key}#${j}`, key))))
    await waitForUsages(gw, 1 + 2 + 3 + 4)
    for (const [k, key] of keys.entries()) {
      const list = await recoveries(gw, '', { key })
      expect(list.json.count, key).toBe(k + 1)
      for (const item of list.json.items)
        expect(contentOf((await recoveries(gw, `/${item.request_id}`, { key })).json).startsWith(`${key}#`)).toBe(true)
    }

    const prefix = `${RUN}-keys::`
    const stored = await keysMatching(admin!, `${prefix}*`)
    // Per owner its catalog and the catalog's order; per record three keys.
    expect(stored).toHaveLength(2 * 4 + 3 * (1 + 2 + 3 + 4))
    const owners = new Set<string>()
    for (const key of stored) {
      expect(key.startsWith(prefix)).toBe(true)
      const match = LAYOUT.exec(key.slice(prefix.length))
      expect(match, key).not.toBeNull()
      owners.add((match![1] ?? match![2])!)
    }
    expect(owners.size).toBe(4)
    // After the prefix: the run's own name is a time in base 36, which can end in "sk" (then "sk-keys::").
    expect(stored.some((key) => key.slice(prefix.length).includes('sk-'))).toBe(false)
  })

  it('lets Redis expire records and index, and never lists a record past its expiry', { timeout: 60_000 }, async () => {
    const QUIET = 'sk-e2e-never-listed'
    const gw = await startGatewayProcess(settings('ttl', { apiKeys: [KEY, QUIET], ttlMs: 4000 }))
    await Promise.all([interrupt(gw, 't-1'), interrupt(gw, 't-2'), interrupt(gw, 'q-1', QUIET)])
    await waitForUsages(gw, 3)
    const prefix = `${RUN}-ttl::`
    const stored = await keysMatching(admin!, `${prefix}*`)
    expect(stored).toHaveLength(3 * 3 + 2 * 2)
    for (const key of stored) {
      const pttl = await admin!.pTTL(key)
      expect(pttl, key).toBeGreaterThan(0)
      expect(pttl, key).toBeLessThanOrEqual(4000)
    }
    const expiresAt = new Map<string, number>()
    for (const key of stored.filter((k) => k.startsWith(`${prefix}idx:`))) {
      for (const [id, entry] of Object.entries(await admin!.hGetAll(key))) expiresAt.set(id, JSON.parse(entry).expires_at)
    }
    expect(expiresAt.size).toBe(3)

    // Poll only KEY's list; QUIET's index is never read, so only Redis itself can remove it.
    await eventually(async () => {
      const askedAt = Date.now()
      const list = await recoveries(gw)
      expect(list.status).toBe(200)
      for (const item of list.json.items)
        expect(askedAt, `listed ${item.request_id} after its expiry`).toBeLessThan(expiresAt.get(item.request_id)!)
      return (await keysMatching(admin!, `${prefix}*`)).length === 0
    }, 30_000)
    expect((await recoveries(gw)).json).toEqual({ count: 0, items: [] })
    expect((await recoveries(gw, '', { key: QUIET })).json).toEqual({ count: 0, items: [] })
  })

  it('keeps proxying while Redis is down, answers 503 on recoveries, holds the records, and writes them once it is back', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort()
    let redis = await startOwnRedis(port)
    const gw = await startGatewayProcess(settings('fault', { redisUrl: `redis://127.0.0.1:${port}` }))
    await interrupt(gw, 'before')
    await waitForUsages(gw, 1)
    expect((await recoveries(gw)).json.count).toBe(1)

    // Cut off while their upstream calls run; Redis stops before any of them answers.
    const lost = Array.from({ length: 8 }, (_, i) => `lost-${i}`)
    await Promise.all(lost.map((content) => interrupt(gw, content, KEY, 1500)))
    await killOwnRedis(redis)

    const delivered = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const res = await answered(
        'chat while Redis is down',
        call(`${gw.url}/v1/chat/completions`, { headers: bearer(KEY), body: chatBody(`up-${i}`, { mock: { delay_ms: 0 } }) }),
      )
      expect(res.status).toBe(200)
      expect(res.json.object).toBe('chat.completion')
      delivered.add(String(res.headers['x-request-id']))
    }
    const down: Array<[string, Promise<TestResponse>]> = [
      ['list', recoveries(gw)],
      ['lookup', call(`${gw.url}/v1/recoveries/lookup`, { headers: bearer(KEY), body: chatBody('before', { mock: { delay_ms: 400 } }) })],
      ['get', recoveries(gw, `/${ULID}`)],
      ['delete', recoveries(gw, `/${ULID}`, { method: 'DELETE' })],
      ['delete all', recoveries(gw, '?all=true', { method: 'DELETE' })],
    ]
    for (const [what, pending] of down) {
      const res = await answered(`${what} while Redis is down`, pending)
      expect(res.status, what).toBe(503)
      expect(res.json.error.code, what).toBe('store_unavailable')
      expect(res.json.error.message, what).toMatch(/redis|store/i)
    }

    // Every interrupted call whose record could not be written is held with its request id, none lost.
    await waitForUsages(gw, 1 + lost.length + delivered.size)
    const unstored = new Set(usages(gw).flatMap((u) => (u.recovered || delivered.has(u.requestId) ? [] : [u.requestId])))
    expect(unstored.size).toBe(lost.length)
    const logged = (message: string) => new Set(gw.events.flatMap((e) => (e.message === message ? [String(e.meta?.requestId)] : [])))
    await eventually(() => logged(HELD).size >= lost.length, 30_000)
    expect(logged(HELD)).toEqual(unstored)
    expect(logged(STORE_FAILED).size).toBe(0)

    // Back up, empty (it persists nothing): the held records are written, and new interruptions are stored again.
    redis = await startOwnRedis(port)
    await eventually(async () => (await recoveries(gw)).json?.count === lost.length, 30_000)
    const seen = usages(gw).length
    await Promise.all(['after-1', 'after-2', 'after-3'].map((content) => interrupt(gw, content)))
    await waitForUsages(gw, seen + 3)
    expect(
      usages(gw)
        .slice(seen)
        .every((u) => u.recovered),
    ).toBe(true)
    const list = (await recoveries(gw)).json
    expect(list.count).toBe(lost.length + 3)
    const contents = await Promise.all(
      list.items.map(async (item: { request_id: string }) => contentOf((await recoveries(gw, `/${item.request_id}`)).json)),
    )
    expect(new Set(contents)).toEqual(new Set([...lost, 'after-1', 'after-2', 'after-3']))

    // No crash all along, and a clean shutdown even with Redis gone again.
    expect(gw.child.exitCode).toBeNull()
    await killOwnRedis(redis)
    expect(await gw.stop()).toBe(0)
    expect(gw.stderr()).not.toMatch(/unhandled|uncaught/i)
  })
})
