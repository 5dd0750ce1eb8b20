import { createClient } from '@keyv/redis'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { ownerId } from '../../src/index.js'
import { RedisCounters } from '../../src/ledger/redis-counters.js'
import type { MockUpstream } from '../../src/testing/index.js'
import { startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, LIMIT_BODIES, startLedgerChain } from '../support/ledger.js'
import {
  type AdminClient,
  describeWithPrograms,
  describeWithRedis,
  keysMatching,
  killOwnRedis,
  REDIS_URL,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { clusterKeyv, type OwnCluster, startOwnCluster } from '../support/redis-cluster.js'

// The limits on Redis: one script per check, the counters shared exactly by every gateway on the same Redis (and
// Cluster), and the documented policy when Redis goes away.
const OWNER_A = ownerId({ apiKey: KEY_A })
const RUN = `ledger-${process.pid}-${Date.now()}`
const [CHAT, , GEMINI, CLAUDE] = DIALECTS as [(typeof DIALECTS)[0], (typeof DIALECTS)[0], (typeof DIALECTS)[0], (typeof DIALECTS)[0]]

let mock: MockUpstream
const chains: LedgerChain[] = []
beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
})
afterEach(async () => {
  await Promise.all(chains.splice(0).map((c) => c.close()))
})
afterAll(() => mock.close())

async function chainOn(store: GatewayOptions['store'], limits: GatewayOptions['limits']): Promise<LedgerChain> {
  const chain = await startLedgerChain({ store, limits }, mock)
  chains.push(chain)
  return chain
}

function send(c: LedgerChain, d: (typeof DIALECTS)[0]) {
  return call(`${c.url}${d.path(false)}`, { headers: d.headers(KEY_A), body: d.body({ usage: d.usage }, false) })
}

/** Each command's call count on a Redis, from INFO commandstats. */
async function commandCounts(admin: AdminClient): Promise<Record<string, number>> {
  const info = await admin.info('commandstats')
  const counts: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts[match[1] as string] = Number(match[2])
  return counts
}
function changed(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const diff: Record<string, number> = {}
  for (const [name, calls] of Object.entries(after)) if (calls !== (before[name] ?? 0)) diff[name] = calls - (before[name] ?? 0)
  return diff
}

await describeWithRedis('limits shared on one Redis', () => {
  let admin: AdminClient
  beforeAll(async () => {
    admin = createClient({ url: REDIS_URL })
    admin.on('error', () => {})
    await admin.connect()
  })
  afterAll(async () => {
    const keys = await keysMatching(admin, `*${RUN}*`)
    if (keys.length > 0) await admin.unlink(keys)
    admin.destroy()
  })

  it('two gateway instances count one owner’s calls, tokens and cost exactly together', async () => {
    await freshMinute()
    const namespace = `${RUN}-two`
    const limits = { owners: { requestsPerMinute: 6 } }
    const [a, b] = [await chainOn(recommendedKeyv(namespace), limits), await chainOn(recommendedKeyv(namespace), limits)]
    for (let i = 0; i < 3; i++) {
      for (const c of [a, b]) {
        const res = await send(c, i === 1 ? CLAUDE : CHAT)
        expect(res.status).toBe(200)
        await eventually(() => c.usage.some((u) => u.requestId === res.headers['x-request-id']))
      }
    }
    for (const c of [a, b]) {
      const refused = await send(c, GEMINI)
      expect(refused.status).toBe(429)
      expect(refused.json).toEqual(LIMIT_BODIES[GEMINI.name])
      expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0')
    }
    // Four chat calls (1801 tokens, 450 300 n$ each) and two Anthropic ones (3000 tokens, 10 956 000 n$ each).
    const expected = { requests: 6, tokens: 4 * 1801 + 2 * 3000, cost: 4 * 450_300 + 2 * 10_956_000 }
    expect(await a.gateway.usage(OWNER_A)).toEqual(expected)
    expect(await b.gateway.usage(OWNER_A)).toEqual(expected)
    // One hash for the owner, its id in a hash tag.
    expect(await keysMatching(admin, `*${namespace}*ledger*`)).toEqual([expect.stringContaining(`ledger:{${OWNER_A}}`)])
  })
})

describeWithPrograms('limits on a Redis of their own', ['redis-server'], 'install redis-server', () => {
  let port: number
  let admin: AdminClient
  let server: Awaited<ReturnType<typeof startOwnRedis>> | undefined
  beforeAll(async () => {
    port = await freePort()
    server = await startOwnRedis(port)
    admin = createClient({ url: `redis://127.0.0.1:${port}` })
    admin.on('error', () => {})
    await admin.connect()
  })
  afterAll(async () => {
    admin.destroy()
    if (server) await killOwnRedis(server)
  })

  it('without limits the happy path sends Redis nothing; with them, one EVALSHA per check, charges riding on checks or sent together', async () => {
    const url = `redis://127.0.0.1:${port}`
    const plain = await chainOn(recommendedKeyv(`${RUN}-plain`, url), undefined)
    await plain.gateway.status()
    let before = await commandCounts(admin)
    for (const d of DIALECTS) expect((await send(plain, d)).status).toBe(200)
    await eventually(() => plain.usage.length === DIALECTS.length)
    expect(changed(before, await commandCounts(admin))).toEqual({ info: 1 })

    const limited = await chainOn(recommendedKeyv(`${RUN}-limited`, url), { owners: { requestsPerMinute: 100 } })
    await limited.gateway.status()
    await send(limited, CHAT) // loads the script (EVALSHA answered NOSCRIPT, then EVAL) on a Redis that had not seen it
    await eventually(() => limited.usage.length === 1)
    // Its charge sent now: held back, it would land after the count below on a slow machine.
    await limited.gateway.usage(OWNER_A)
    before = await commandCounts(admin)
    for (const d of DIALECTS) expect((await send(limited, d)).status).toBe(200)
    await eventually(() => limited.usage.length === 1 + DIALECTS.length)
    // A check per call, one script run each (the commands it runs inside are the script's, not round trips); a
    // charge rides on the owner's next check when one comes soon enough, else goes on its own: never more than one
    // run of the script per check and one per charge.
    const sent = async () => {
      const diff = changed(before, await commandCounts(admin))
      for (const inside of ['time', 'hmget', 'hset', 'hincrby', 'pexpire']) delete diff[inside]
      return diff
    }
    // One read, which sends any charge still held back with it: the counts are exact.
    const used = await limited.gateway.usage(OWNER_A)
    expect(used.tokens).toBe(DIALECTS.reduce((sum, d) => sum + d.counts.total_tokens, CHAT.counts.total_tokens))
    const diff = await sent()
    expect(diff.evalsha).toBeGreaterThanOrEqual(DIALECTS.length + 1)
    expect(diff.evalsha).toBeLessThanOrEqual(2 * DIALECTS.length + 1)
    expect(Object.keys(diff).sort()).toEqual(['evalsha', 'info'])
  })

  it('charges of one owner are summed and ride on its next check: one round trip for both', async () => {
    const counters = new RedisCounters(recommendedKeyv(`${RUN}-fold`, `redis://127.0.0.1:${port}`), () => {})
    const limits = { requests: -1, tokens: 1000, cost: -1 }
    await counters.check('o', limits)
    const before = await commandCounts(admin)
    const charged = [counters.charge('o', 600, 7), counters.charge('o', 500, 3)]
    const check = await counters.check('o', limits, { tokens: 40, cost: 1 })
    await Promise.all(charged)
    // The check saw both charges: over the token limit, so nothing was reserved.
    expect(check).toMatchObject({ over: 'tokens', tokens: 1100, cost: 10 })
    expect(changed(before, await commandCounts(admin)).evalsha).toBe(1)
    expect(await counters.usage('o')).toEqual({ requests: 1, tokens: 1100, cost: 10 })
  })

  it('checks of one owner that come while its step is out go together in the next: the limit holds exactly', async () => {
    const counters = new RedisCounters(recommendedKeyv(`${RUN}-batch`, `redis://127.0.0.1:${port}`), () => {})
    const limits = { requests: 30, tokens: 1000, cost: -1 }
    await counters.check('warm', limits)
    const before = await commandCounts(admin)
    const checks = await Promise.all(Array.from({ length: 50 }, () => counters.check('o', limits, { tokens: 30, cost: 2 })))
    const sent = changed(before, await commandCounts(admin)).evalsha ?? 0
    // The first went alone, the other 49 waited for it and went in one step (at most 128 ride together).
    expect(sent).toBe(2)
    // Run in order, each seeing the reservations of those before it: the first 30 go, the rest reach the request limit.
    const admitted = checks.filter((c) => c.over === undefined)
    expect(admitted).toHaveLength(30)
    expect(checks.slice(0, 30).every((c) => c.over === undefined)).toBe(true)
    expect(checks.slice(30).map((c) => c.over)).toEqual(Array(20).fill('requests'))
    expect(checks.map((c) => c.tokens).slice(0, 3)).toEqual([0, 30, 60])
    expect(checks[29]).toMatchObject({ requests: 30, tokens: 870, cost: 58 })
    expect(await counters.usage('o')).toEqual({ requests: 30, tokens: 900, cost: 60 })
  })

  it('a step writes the owner’s counts back with one HSET; the hash expires after its day, set when the day begins', async () => {
    const counters = new RedisCounters(recommendedKeyv(`${RUN}-write`, `redis://127.0.0.1:${port}`), () => {})
    const limits = { requests: 100, tokens: 10_000, cost: 1_000_000 }
    const key = counters.key('o')
    let before = await commandCounts(admin)
    await counters.check('o', limits, { tokens: 40, cost: 5 })
    // The first step of the day: one HSET of the counts and the expiry, past the day's end.
    expect(changed(before, await commandCounts(admin))).toMatchObject({ hset: 1, pexpire: 1 })
    const ttl = await admin.pTTL(key)
    expect(ttl).toBeGreaterThan(60_000)
    expect(ttl).toBeLessThanOrEqual(86_400_000 + 60_000)
    before = await commandCounts(admin)
    await Promise.all([counters.charge('o', 100, 20), counters.charge('o', -40, -5)])
    await counters.check('o', limits, { tokens: 10, cost: 1 })
    const diff = changed(before, await commandCounts(admin))
    // A later step of the same day: the counts in one HSET, no HINCRBY, and the expiry left as the day's first set it.
    expect(diff.hset).toBeGreaterThanOrEqual(1)
    expect(diff.hincrby).toBeUndefined()
    expect(diff.pexpire).toBeUndefined()
    expect(await admin.pTTL(key)).toBeGreaterThan(ttl - 60_000)
    expect(await counters.usage('o')).toEqual({ requests: 2, tokens: 110, cost: 21 })
    // A count never goes below 0, however much is given back.
    await counters.charge('o', -1_000_000, -1_000_000)
    expect(await counters.usage('o')).toEqual({ requests: 2, tokens: 0, cost: 0 })
  })

  for (const failClosed of [false, true]) {
    it(`Redis stopped mid-run, failClosed: ${failClosed}: ${failClosed ? '503 in the dialect’s shape' : 'calls go on, one warn line'}; back when Redis is`, async () => {
      const url = `redis://127.0.0.1:${port}`
      const c = await chainOn(recommendedKeyv(`${RUN}-down-${failClosed}`, url), { owners: { requestsPerMinute: 100 }, failClosed })
      expect((await send(c, CHAT)).status).toBe(200)
      if (server) await killOwnRedis(server)
      server = undefined
      for (let i = 0; i < 3; i++) {
        for (const d of [CHAT, CLAUDE]) {
          const res = await send(c, d)
          if (!failClosed) {
            expect(res.status).toBe(200)
            continue
          }
          expect(res.status).toBe(503)
          expect(res.headers['retry-after']).toBe('1')
          expect(d === CLAUDE ? res.json.error.type : res.json.error.code).toBe(d === CLAUDE ? 'api_error' : 'store_unavailable')
        }
      }
      const lines = c.warnings.filter((w) => /rate-limit store failed/.test(w.message))
      // One line however many calls failed (more only if the run took longer than the interval).
      expect(lines).toHaveLength(1)
      expect(lines[0]?.message).toMatch(failClosed ? /refused/ : /unmetered/)
      expect(JSON.stringify(c.warnings)).not.toContain(KEY_A)
      expect(JSON.stringify(c.warnings)).not.toContain('price me')
      server = await startOwnRedis(port)
      admin.destroy()
      admin = createClient({ url })
      admin.on('error', () => {})
      await admin.connect()
      const back = await eventually(async () => {
        const res = await send(c, CHAT)
        return res.status === 200 ? res : undefined
      }, 15_000)
      expect(back.status).toBe(200)
    }, 30_000)
  }
})

describeWithPrograms('limits on a Redis Cluster', ['redis-server', 'redis-cli'], 'install redis-server', () => {
  let cluster: OwnCluster | undefined
  beforeAll(async () => {
    cluster = await startOwnCluster({ masters: 3 })
  }, 120_000)
  afterAll(async () => {
    await Promise.all(chains.splice(0).map((c) => c.close()))
    await cluster?.stop()
  })

  it('two gateways on a cluster share one owner’s counters, kept in the owner’s slot', async () => {
    if (!cluster) throw new Error('no cluster')
    await freshMinute()
    const limits = { owners: { requestsPerMinute: 4 } }
    const a = await chainOn(clusterKeyv(cluster, `${RUN}-cluster`), limits)
    const b = await chainOn(clusterKeyv(cluster, `${RUN}-cluster`), limits)
    for (const c of [a, b, a, b]) {
      const res = await send(c, CHAT)
      expect(res.status).toBe(200)
      await eventually(() => c.usage.some((u) => u.requestId === res.headers['x-request-id']))
    }
    expect((await send(a, GEMINI)).status).toBe(429)
    expect((await send(b, CLAUDE)).status).toBe(429)
    const expected = { requests: 4, tokens: 4 * 1801, cost: 4 * 450_300 }
    expect(await a.gateway.usage(OWNER_A)).toEqual(expected)
    expect(await b.gateway.usage(OWNER_A)).toEqual(expected)
  }, 60_000)
})
