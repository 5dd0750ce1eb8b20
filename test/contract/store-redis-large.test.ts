import type { ChildProcess } from 'node:child_process'
import type KeyvRedis from '@keyv/redis'
import { createClient } from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { isGatewayError } from '../../src/errors.js'
import { createGatewayStore, type GatewayStore } from '../../src/store/gateway-store.js'
import { outcomeUnknown } from '../../src/store/guard.js'
import { newestFirst, splitRecord } from '../../src/store/layout.js'
import {
  type AdminClient,
  commandCalls,
  describeWithRedis,
  keysMatching,
  killAllOwnRedis,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { makeRecord, newOwner, requestIdAt } from './store-contract.js'

const LIVE = 60_000
const SHARED_HASH = '5eed5eed5eed5eed'
const NS = 'large'

// An owner this large is written straight into Redis in the gateway's own layout (pipelined, a few thousand commands
// per round trip), not through 60 000 captures; the store then has to list, look up and delete it within its deadline.
await describeWithRedis('Redis store with one very large owner', () => {
  let admin: AdminClient
  let keyv: Keyv
  let store: GatewayStore
  let redis: ChildProcess
  const owner = newOwner()
  const live: string[] = []
  const shared: string[] = []
  const stale: string[] = []

  beforeAll(async () => {
    const port = await freePort()
    redis = await startOwnRedis(port)
    const url = `redis://127.0.0.1:${port}`
    admin = createClient({ url })
    await admin.connect()
    keyv = recommendedKeyv(NS, url)
    store = createGatewayStore({ keyv, ownerLimits: { maxRecords: 1_000_000, maxBytes: 1 << 30 } })
    const index = `${NS}::idx:{${owner}}`
    const ttl = 10 * 60_000
    const expires = Date.now() + ttl
    const base = Date.now() - LIVE * 10
    for (let first = 0; first < LIVE + 40; first += 2000) {
      const batch = admin.multi()
      for (let i = first; i < Math.min(first + 2000, LIVE + 40); i++) {
        const id = requestIdAt(base + i * 10)
        const record = makeRecord({ id, createdAt: Math.floor((base + i * 10) / 1000), hash: i % 12_000 === 7 ? SHARED_HASH : undefined })
        const { envelope, requestBody, responseBody } = splitRecord(record)
        const detail = `${NS}::rec:{${owner}}:${id}`
        // The last 40: 20 whose detail is gone, 20 whose entry has expired; both must be dropped, never listed.
        const gone = i >= LIVE && i < LIVE + 20
        const expired = i >= LIVE + 20
        if (!gone) batch.set(detail, JSON.stringify({ value: envelope, expires }), { PX: ttl })
        batch.set(`${detail}:req`, JSON.stringify({ value: requestBody, expires }), { PX: ttl })
        batch.set(`${detail}:res`, JSON.stringify({ value: responseBody, expires }), { PX: ttl })
        const entry = {
          request_id: id,
          created_at: record.created_at,
          interrupted_reason: record.interrupted_reason,
          request_body_hash: record.request_body_hash,
          expires_at: expired ? Date.now() - 1000 : expires,
        }
        batch.hSet(index, id, JSON.stringify(entry))
        if (gone || expired) stale.push(id)
        else live.push(id)
        if (!gone && !expired && record.request_body_hash === SHARED_HASH) shared.push(id)
      }
      await batch.execAsPipeline()
    }
    await admin.pExpire(index, ttl)
    await admin.configResetStat()
  }, 120_000)

  afterAll(async () => {
    await store?.close()
    await (keyv?.store as KeyvRedis<unknown> | undefined)?.disconnect(true)
    admin?.destroy()
    await killAllOwnRedis()
  })

  it('lists every live record exactly once, newest first, and drops the stale entries', async () => {
    const listed = await store.list(owner)
    expect(listed).toHaveLength(LIVE)
    expect(new Set(listed.map((s) => s.request_id))).toEqual(new Set(live))
    expect([...listed].sort(newestFirst)).toEqual(listed)
    expect(listed[0]?.request_id).toBe(live.at(-1))
    const fields = await admin.hKeys(`${NS}::idx:{${owner}}`)
    expect(fields).toHaveLength(LIVE)
    expect(fields.some((field) => stale.includes(field))).toBe(false)
  })

  it('looks up the few records of one request body hash among all of them', async () => {
    expect(shared).toHaveLength(5)
    const found = await store.lookup(owner, SHARED_HASH)
    expect(found.map((s) => s.request_id)).toEqual([...shared].reverse())
    expect(await store.lookup(owner, 'ffffffffffffffff')).toEqual([])
  })

  it('counts every record on a dry run and deletes none', async () => {
    expect(await store.deleteAll(owner, { dryRun: true })).toBe(LIVE)
    expect(await admin.hLen(`${NS}::idx:{${owner}}`)).toBe(LIVE)
    expect(await admin.exists(`${NS}::rec:{${owner}}:${live[0]}`)).toBe(1)
  })

  it('deletes every record and every key of the owner', async () => {
    expect(await store.deleteAll(owner, { dryRun: false })).toBe(LIVE)
    expect(await store.list(owner)).toEqual([])
    expect(await keysMatching(admin, `${NS}::*${owner}*`)).toEqual([])
  })

  it('reads the catalog in HSCAN pages and deletes in batches, never one command over the whole hash', async () => {
    const calls = await commandCalls(admin)
    expect(calls.get('hgetall') ?? 0).toBe(0)
    // Four walks (list, lookup, dry run, delete) of 60 000 fields, about a thousand per page.
    expect(calls.get('hscan') ?? 0).toBeGreaterThanOrEqual(4 * 50)
    // One transaction per page of deletions.
    expect(calls.get('exec') ?? 0).toBeGreaterThanOrEqual(50)
  })

  it('still fails a walk when Redis stops answering, the deadline holding for each page', async () => {
    const impatient = createGatewayStore({ keyv, timeoutMs: 1000 })
    redis.kill('SIGSTOP')
    try {
      const error = await impatient.list(owner).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(isGatewayError(error) && error.code).toBe('store_unavailable')
      expect(outcomeUnknown(error)).toBe(true)
    } finally {
      redis.kill('SIGCONT')
    }
  })
})
