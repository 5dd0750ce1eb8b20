import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvariantError, isGatewayError } from '../../src/errors.js'
import type { GatewayStore, GatewayStoreOptions } from '../../src/store/gateway-store.js'
import type { Eviction } from '../../src/store/memory-catalog.js'
import { OMITTED_TOO_LARGE, type RecoveryRecord } from '../../src/types.js'

/** What a backend under test provides; `failWrites` makes later writes fail, where the backend can. */
export interface StoreHarness {
  store: GatewayStore
  cleanup: () => Promise<void>
  failWrites?: () => void
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** A ULID-shaped request id for the given time; random tail so ids never collide across runs. */
export function requestIdAt(ms: number): string {
  let time = ''
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time
  let tail = ''
  for (const byte of randomBytes(16)) tail += CROCKFORD[byte % 32]
  return time + tail
}

/** Eviction reports as one `{ owner, requestId, reason }` per record, in report order. */
export function evictedRecords(reports: Eviction[]): Array<{ owner: string; requestId: string; reason: Eviction['reason'] }> {
  return reports.flatMap(({ owner, requestIds, reason }) => requestIds.map((requestId) => ({ owner, requestId, reason })))
}

/** A fresh 32-hex owner per test, so backends shared between tests never mix. */
export function newOwner(): string {
  return randomBytes(16).toString('hex')
}

export function makeRecord(
  overrides: { id?: string; createdAt?: number; hash?: string; requestBody?: string; responseBody?: string; reason?: string } = {},
): RecoveryRecord {
  const createdAt = overrides.createdAt ?? Math.floor(Date.now() / 1000)
  const hash = overrides.hash ?? randomBytes(8).toString('hex')
  const requestBody = overrides.requestBody ?? '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'
  const responseBody = overrides.responseBody ?? '{"id":"chatcmpl-1","choices":[{"message":{"content":"hello"}}]}'
  return {
    request_id: overrides.id ?? requestIdAt(createdAt * 1000),
    created_at: createdAt,
    interrupted_reason: overrides.reason ?? 'context canceled',
    request_body_hash: hash,
    request: {
      body_raw: requestBody,
      request_body_hash: hash,
      path: '/v1/chat/completions',
      endpoint: 'chat.completions',
      model: 'gpt-4o-mini',
    },
    response: {
      body_raw: responseBody,
      response_body_size: Buffer.byteLength(responseBody),
      status: 200,
      content_type: 'application/json',
    },
  }
}

/** Text that needs JSON escaping (quotes, backslashes, controls), non-BMP and CJK characters. */
function awkwardText(bytes: number): string {
  const chunk = 'plain ascii "quoted" back\\slash \n\t\u0000 证明费马大定理 😀 :colon '
  return chunk.repeat(Math.ceil(bytes / Buffer.byteLength(chunk))).slice(0, bytes)
}

async function expectStoreUnavailable(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(isGatewayError(error) && error.code).toBe('store_unavailable')
}

/** The behaviour every GatewayStore backend must share (like @keyv/test-suite). */
/**
 * Runs the contract on one backend. The write-failure case is registered only for backends that can
 * inject a failure (`failWrites`), so no backend reports a skipped test.
 */
export function describeStoreContract(
  name: string,
  makeStore: (options: Pick<GatewayStoreOptions, 'ownerLimits' | 'onEvict'>) => Promise<StoreHarness>,
  features: { failWrites: boolean } = { failWrites: true },
): void {
  describe(`GatewayStore contract: ${name}`, () => {
    let harness: StoreHarness
    let store: GatewayStore
    const ttl = 60_000

    // Above the 50 records the concurrency case puts for one owner.
    const MAX_RECORDS = 60
    const evictions: Eviction[] = []
    beforeEach(async () => {
      evictions.length = 0
      harness = await makeStore({ ownerLimits: { maxRecords: MAX_RECORDS, maxBytes: 64 << 20 }, onEvict: (e) => evictions.push(e) })
      store = harness.store
    })
    afterEach(async () => {
      await harness.cleanup()
    })

    it('round-trips a record byte for byte, unicode and the omitted marker included', async () => {
      const owner = newOwner()
      const record = makeRecord({ requestBody: OMITTED_TOO_LARGE, responseBody: `${awkwardText(4000)}\ud800 lone` })
      const other = makeRecord({ requestBody: ':base64:AAAA', responseBody: '"just a string"' })
      await store.put(owner, record, ttl)
      await store.put(owner, other, ttl)
      const got = await store.get(owner, record.request_id)
      expect(got).toEqual(record)
      expect(got?.request.body_raw).toBe(OMITTED_TOO_LARGE)
      expect(got?.response.body_raw === record.response.body_raw).toBe(true)
      expect(await store.get(owner, other.request_id)).toEqual(other)
    })

    it('lists newest first (created_at, then request id) with exactly the summary fields', async () => {
      const owner = newOwner()
      const base = Math.floor(Date.now() / 1000)
      const oldest = makeRecord({ createdAt: base - 100 })
      const sameSecondA = makeRecord({ createdAt: base, id: requestIdAt(base * 1000) })
      const sameSecondB = makeRecord({ createdAt: base, id: requestIdAt(base * 1000 + 5) })
      const newest = makeRecord({ createdAt: base + 50 })
      for (const r of [sameSecondA, newest, oldest, sameSecondB]) await store.put(owner, r, ttl)
      const listed = await store.list(owner)
      expect(listed.map((s) => s.request_id)).toEqual([newest, sameSecondB, sameSecondA, oldest].map((r) => r.request_id))
      expect(listed[0]).toEqual({
        request_id: newest.request_id,
        created_at: newest.created_at,
        interrupted_reason: newest.interrupted_reason,
        request_body_hash: newest.request_body_hash,
      })
    })

    it('pages the list in the same order: limit, after, hasMore, a deleted record skipped, an unknown after refused', async () => {
      const owner = newOwner()
      const base = Math.floor(Date.now() / 1000) - 1000
      // Many records in one second and a few in others: a page may start in the middle of a second.
      const records = Array.from({ length: 25 }, (_, i) => {
        const second = base + Math.floor(i / 10)
        return makeRecord({ createdAt: second, id: requestIdAt(second * 1000 + i) })
      })
      for (const r of [...records].reverse()) await store.put(owner, r, ttl)
      const order = (await store.list(owner)).map((s) => s.request_id)
      expect(order).toEqual(records.map((r) => r.request_id).reverse())
      const pages: string[][] = []
      let after: string | undefined
      for (;;) {
        const page = await store.listPage(owner, { limit: 7, after })
        if (!page) throw new Error('a page after a listed record must exist')
        pages.push(page.items.map((s) => s.request_id))
        if (!page.hasMore) break
        after = page.items.at(-1)?.request_id
      }
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4])
      expect(pages.flat()).toEqual(order)
      await store.delete(owner, order[8] as string)
      const next = await store.listPage(owner, { limit: 3, after: order[6] })
      expect(next?.items.map((s) => s.request_id)).toEqual([order[7], order[9], order[10]])
      expect(next?.hasMore).toBe(true)
      expect((await store.listPage(owner, { limit: 100 }))?.hasMore).toBe(false)
      expect(await store.listPage(owner, { limit: 3, after: order[8] })).toBeUndefined()
      expect(await store.listPage(owner, { limit: 3, after: requestIdAt(Date.now()) })).toBeUndefined()
      expect(await store.listPage(newOwner(), { limit: 3 })).toEqual({ items: [], hasMore: false })
    })

    it('answers an owner with no records with empty results', async () => {
      const owner = newOwner()
      expect(await store.list(owner)).toEqual([])
      expect(await store.lookup(owner, '6ded87ad1c72779a')).toEqual([])
      expect(await store.get(owner, requestIdAt(Date.now()))).toBeUndefined()
      expect(await store.delete(owner, requestIdAt(Date.now()))).toBe(false)
      expect(await store.deleteAll(owner, { dryRun: false })).toBe(0)
    })

    it('looks records up by request body hash', async () => {
      const owner = newOwner()
      const first = makeRecord({ hash: '6ded87ad1c72779a', createdAt: 1_700_000_000 })
      const second = makeRecord({ hash: '6ded87ad1c72779a', createdAt: 1_700_000_100 })
      const unrelated = makeRecord({ hash: '0123456789abcdef' })
      for (const r of [first, unrelated, second]) await store.put(owner, r, ttl)
      const found = await store.lookup(owner, '6ded87ad1c72779a')
      expect(found.map((s) => s.request_id)).toEqual([second.request_id, first.request_id])
      expect(await store.lookup(owner, 'ffffffffffffffff')).toEqual([])
    })

    it('deletes one record and says whether it existed', async () => {
      const owner = newOwner()
      const kept = makeRecord()
      const gone = makeRecord()
      await store.put(owner, kept, ttl)
      await store.put(owner, gone, ttl)
      expect(await store.delete(owner, gone.request_id)).toBe(true)
      expect(await store.get(owner, gone.request_id)).toBeUndefined()
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([kept.request_id])
      expect(await store.delete(owner, gone.request_id)).toBe(false)
      expect(await store.delete(owner, requestIdAt(Date.now()))).toBe(false)
      expect(await store.get(owner, kept.request_id)).toEqual(kept)
    })

    it('deleteAll: a dry run counts and keeps; a real run removes only that owner’s records', async () => {
      const owner = newOwner()
      const bystander = newOwner()
      for (let i = 0; i < 3; i++) await store.put(owner, makeRecord(), ttl)
      const theirs = makeRecord()
      await store.put(bystander, theirs, ttl)
      expect(await store.deleteAll(owner, { dryRun: true })).toBe(3)
      expect(await store.list(owner)).toHaveLength(3)
      expect(await store.deleteAll(owner, { dryRun: false })).toBe(3)
      expect(await store.list(owner)).toEqual([])
      expect(await store.deleteAll(owner, { dryRun: true })).toBe(0)
      expect((await store.list(bystander)).map((s) => s.request_id)).toEqual([theirs.request_id])
      expect(await store.get(bystander, theirs.request_id)).toEqual(theirs)
    })

    it('markServedAgain: the detail gets served_again_at (the first time counts), the summaries do not, other owners never', async () => {
      const owner = newOwner()
      const record = makeRecord()
      const other = makeRecord()
      // Noted before the record is kept (a repeat served while its call still ran), then kept.
      await store.markServedAgain(owner, record.request_id, 1_800_000_000, ttl)
      await store.put(owner, record, ttl)
      await store.put(owner, other, ttl)
      await store.markServedAgain(owner, record.request_id, 1_800_000_100, ttl)
      await store.markServedAgain(newOwner(), other.request_id, 1_800_000_000, ttl)
      expect(await store.get(owner, record.request_id)).toEqual({ ...record, served_again_at: 1_800_000_000 })
      expect(await store.get(owner, other.request_id)).toEqual(other)
      for (const summary of await store.list(owner)) {
        expect(Object.keys(summary).sort()).toEqual(['created_at', 'interrupted_reason', 'request_body_hash', 'request_id'])
      }
      // A note without a record makes no record.
      await store.markServedAgain(owner, requestIdAt(Date.now()), 1_800_000_000, ttl)
      expect(await store.list(owner)).toHaveLength(2)
    })

    it('keeps owners apart', async () => {
      const alice = newOwner()
      const bob = newOwner()
      const record = makeRecord({ hash: 'aaaaaaaaaaaaaaaa' })
      await store.put(alice, record, ttl)
      expect(await store.list(bob)).toEqual([])
      expect(await store.lookup(bob, 'aaaaaaaaaaaaaaaa')).toEqual([])
      expect(await store.get(bob, record.request_id)).toBeUndefined()
      expect(await store.delete(bob, record.request_id)).toBe(false)
      expect(await store.deleteAll(bob, { dryRun: false })).toBe(0)
      expect(await store.get(alice, record.request_id)).toEqual(record)
      expect(await store.list(alice)).toHaveLength(1)
    })

    it('forgets expired records everywhere', async () => {
      const owner = newOwner()
      const shortLived = makeRecord({ hash: 'bbbbbbbbbbbbbbbb' })
      const longLived = makeRecord()
      await store.put(owner, shortLived, 300)
      await store.put(owner, longLived, ttl)
      expect(await store.list(owner)).toHaveLength(2)
      await sleep(450)
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([longLived.request_id])
      expect(await store.lookup(owner, 'bbbbbbbbbbbbbbbb')).toEqual([])
      expect(await store.get(owner, shortLived.request_id)).toBeUndefined()
      expect(await store.delete(owner, shortLived.request_id)).toBe(false)
      expect(await store.deleteAll(owner, { dryRun: true })).toBe(1)
    })

    it('round-trips a 20 MB request and a 5 MB response byte for byte', async () => {
      const owner = newOwner()
      const record = makeRecord({ requestBody: awkwardText(20 * 1024 * 1024), responseBody: awkwardText(5 * 1024 * 1024) })
      await store.put(owner, record, ttl)
      const got = await store.get(owner, record.request_id)
      expect(got?.request.body_raw.length).toBe(record.request.body_raw.length)
      expect(got?.request.body_raw === record.request.body_raw).toBe(true)
      expect(got?.response.body_raw === record.response.body_raw).toBe(true)
      expect(await store.list(owner)).toHaveLength(1)
    })

    it('lists each of 50 concurrent puts of one owner exactly once', async () => {
      const owner = newOwner()
      const records = Array.from({ length: 50 }, () => makeRecord())
      await Promise.all(records.map((r) => store.put(owner, r, ttl)))
      const ids = (await store.list(owner)).map((s) => s.request_id)
      expect(ids).toHaveLength(50)
      expect(new Set(ids)).toEqual(new Set(records.map((r) => r.request_id)))
    })

    it('treats a repeated put of one id (a retry) as one record', async () => {
      const owner = newOwner()
      const record = makeRecord()
      await store.put(owner, record, ttl)
      await store.put(owner, record, ttl)
      expect(await store.list(owner)).toHaveLength(1)
      expect(await store.deleteAll(owner, { dryRun: false })).toBe(1)
    })

    it('refuses ids that could reach into other keys, as a broken invariant', async () => {
      const owner = newOwner()
      for (const attempt of [
        store.list('abc:*'),
        store.get(owner, '../../etc'),
        store.get('owner*', requestIdAt(Date.now())),
        store.put(owner, makeRecord({ id: 'x:{y}*' }), ttl),
        store.delete(owner, 'ABC'),
      ]) {
        const error = await attempt.then(
          () => undefined,
          (e: unknown) => e,
        )
        // Callers check ids before the store sees them: a bad one here is a broken invariant, never a client's 400.
        expect(isGatewayError(error)).toBe(false)
        expect(error).toBeInstanceOf(InvariantError)
      }
    })

    it('keeps at most maxRecords per owner, removing and reporting that owner’s oldest, and no one else’s', async () => {
      const owner = newOwner()
      const other = newOwner()
      const mine = Array.from({ length: MAX_RECORDS + 3 }, (_, i) => makeRecord({ id: requestIdAt(Date.now() - 100_000 + i * 1000) }))
      const theirs = makeRecord()
      await store.put(other, theirs, ttl)
      for (const record of mine) await store.put(owner, record, ttl)
      const listed = (await store.list(owner)).map((s) => s.request_id)
      expect(listed).toEqual(
        mine
          .slice(3)
          .map((r) => r.request_id)
          .reverse(),
      )
      expect(evictedRecords(evictions)).toEqual(
        mine.slice(0, 3).map((r) => ({ owner, requestId: r.request_id, reason: 'owner_record_limit' })),
      )
      expect(await store.get(owner, mine[0]?.request_id as string)).toBeUndefined()
      expect((await store.list(other)).map((s) => s.request_id)).toEqual([theirs.request_id])
    })

    it('rejects with store_unavailable once closed', async () => {
      await store.close()
      await expectStoreUnavailable(store.list(newOwner()))
    })

    if (features.failWrites)
      it('rejects a put the store did not take, and does not list it', async () => {
        if (!harness.failWrites) throw new Error(`${name} declares failWrites but its harness has none`)
        const owner = newOwner()
        const kept = makeRecord()
        await store.put(owner, kept, ttl)
        harness.failWrites()
        await expectStoreUnavailable(store.put(owner, makeRecord(), ttl))
        expect((await store.list(owner)).map((s) => s.request_id)).toEqual([kept.request_id])
      })
  })
}
