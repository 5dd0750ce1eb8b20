import { setTimeout as sleep } from 'node:timers/promises'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { createGatewayStore } from '../../src/store/gateway-store.js'
import { approxBytes, createMemoryKeyv, LruStoreAdapter } from '../../src/store/lru-adapter.js'
import type { Eviction } from '../../src/store/memory-catalog.js'
import { describeStoreContract, evictedRecords, makeRecord, newOwner, requestIdAt } from './store-contract.js'

describeStoreContract(
  'default in-memory store',
  async (options) => {
    const store = createGatewayStore({ ...options })
    return { store, cleanup: () => store.close() }
    // Nothing can reach the private LRU to make it fail; the oversize test below covers a rejected write.
  },
  { failWrites: false },
)

describeStoreContract('user-supplied new Keyv() (Map store, JSON serialiser)', async (options) => {
  const keyv = new Keyv()
  const map = keyv.store as Map<string, unknown>
  const store = createGatewayStore({ keyv, ...options })
  return {
    store,
    cleanup: () => store.close(),
    failWrites: () => {
      map.set = () => {
        throw new Error('simulated store failure')
      }
    },
  }
})

describe('in-memory store', () => {
  it('evicts the oldest records under its byte bound, and list stops showing them', async () => {
    const store = createGatewayStore({ maxMemoryBytes: 2 * 1024 * 1024 })
    const owner = newOwner()
    // Each record weighs ~400 KB by the size estimate (two bytes per UTF-16 unit).
    const records = Array.from({ length: 12 }, (_, i) =>
      makeRecord({ createdAt: 1_700_000_000 + i, requestBody: 'q'.repeat(150_000), responseBody: 'r'.repeat(50_000) }),
    )
    for (const r of records) await store.put(owner, r, 60_000)
    const listed = (await store.list(owner)).map((s) => s.request_id)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.length).toBeLessThan(records.length)
    // The newest survive, the oldest are gone from list and get alike.
    const newestFirst = [...records].reverse().map((r) => r.request_id)
    expect(listed).toEqual(newestFirst.slice(0, listed.length))
    expect(await store.get(owner, records[0]!.request_id)).toBeUndefined()
    for (const id of listed) expect((await store.get(owner, id))?.request_id).toBe(id)
    expect(await store.deleteAll(owner, { dryRun: true })).toBe(listed.length)
    await store.close()
  })

  it('holds each owner to its byte quota: one owner’s burst evicts its own oldest, never another owner’s records', async () => {
    const evictions: Eviction[] = []
    const store = createGatewayStore({
      maxMemoryBytes: 8 << 20,
      ownerLimits: { maxRecords: 10_000, maxBytes: 1 << 20 },
      onEvict: (e) => evictions.push(e),
    })
    const quiet = newOwner()
    const noisy = newOwner()
    const kept = makeRecord({ requestBody: 'a'.repeat(50_000) })
    await store.put(quiet, kept, 60_000)
    // Each noisy record weighs ~400 KB: two fit in the 1 MiB quota.
    const burst = Array.from({ length: 30 }, (_, i) =>
      makeRecord({ id: requestIdAt(Date.now() - 60_000 + i * 1000), requestBody: 'q'.repeat(150_000), responseBody: 'r'.repeat(50_000) }),
    )
    for (const r of burst) await store.put(noisy, r, 60_000)
    expect((await store.list(quiet)).map((s) => s.request_id)).toEqual([kept.request_id])
    expect((await store.get(quiet, kept.request_id))?.request.body_raw).toBe(kept.request.body_raw)
    expect((await store.list(noisy)).map((s) => s.request_id)).toEqual(
      burst
        .slice(-2)
        .map((r) => r.request_id)
        .reverse(),
    )
    expect(evictedRecords(evictions)).toEqual(
      burst.slice(0, 28).map((r) => ({ owner: noisy, requestId: r.request_id, reason: 'owner_byte_limit' })),
    )
    await store.close()
  })

  it('makes room from the owners over their fair share: three heavy owners filling the store never evict a light one', async () => {
    const evictions: Eviction[] = []
    // The per-owner quota at its default ratio, half the store: three owners at their quota would hold 150 % of it.
    const store = createGatewayStore({
      maxMemoryBytes: 4 << 20,
      ownerLimits: { maxRecords: 10_000, maxBytes: 2 << 20 },
      onEvict: (e) => evictions.push(e),
    })
    const light = newOwner()
    const heavy = [newOwner(), newOwner(), newOwner()]
    const start = Date.now() - 600_000
    const kept = Array.from({ length: 5 }, (_, i) => makeRecord({ id: requestIdAt(start + i) }))
    for (const r of kept) await store.put(light, r, 60_000)
    // ~200 KB each, written in turns: 20 per heavy owner, 4 MB each, 12 MB in all into a 4 MiB store.
    for (let i = 0; i < 60; i++) {
      const record = makeRecord({
        id: requestIdAt(start + 1000 + i * 10),
        requestBody: 'q'.repeat(80_000),
        responseBody: 'r'.repeat(20_000),
      })
      await store.put(heavy[i % 3] as string, record, 60_000)
    }
    expect((await store.list(light)).map((s) => s.request_id)).toEqual(kept.map((r) => r.request_id).reverse())
    for (const r of kept) expect((await store.get(light, r.request_id))?.request_id).toBe(r.request_id)
    const evicted = evictedRecords(evictions)
    expect(evicted.some((e) => e.owner === light)).toBe(false)
    // Each heavy owner keeps about its fair share (a quarter of the store, ~5 records of 200 KB), none starved.
    const counts = await Promise.all(heavy.map(async (owner) => (await store.list(owner)).length))
    for (const count of counts) expect(count).toBeGreaterThanOrEqual(3)
    expect(evicted.length + counts.reduce((a, b) => a + b, 0)).toBe(60)
    await store.close()
  })

  it('reports every record the whole store’s byte bound pushes out', async () => {
    const evictions: Eviction[] = []
    const store = createGatewayStore({ maxMemoryBytes: 2 << 20, onEvict: (e) => evictions.push(e) })
    const owners = [newOwner(), newOwner()]
    const records = Array.from({ length: 12 }, (_, i) =>
      makeRecord({ id: requestIdAt(Date.now() - 60_000 + i * 1000), requestBody: 'q'.repeat(150_000), responseBody: 'r'.repeat(50_000) }),
    )
    for (const [i, r] of records.entries()) await store.put(owners[i % 2] as string, r, 60_000)
    const listed = [...(await store.list(owners[0] as string)), ...(await store.list(owners[1] as string))].map((s) => s.request_id)
    expect(evictedRecords(evictions).length + listed.length).toBe(records.length)
    expect(evictions.every((e) => e.reason === 'memory_full')).toBe(true)
    // Two owners of equal weight: each loses its own oldest first.
    for (const [i, owner] of owners.entries()) {
      const own = records.filter((_, j) => j % 2 === i).map((r) => r.request_id)
      const lost = evictedRecords(evictions).filter((e) => e.owner === owner)
      expect(lost.map((e) => e.requestId)).toEqual(own.slice(0, lost.length))
    }
    await store.close()
  })

  it('keeps 12 000 captures of one owner at the 10 000 cap, adding each in constant time', async () => {
    const evictions: Eviction[] = []
    const store = createGatewayStore({ onEvict: (e) => evictions.push(e) })
    const owner = newOwner()
    const records = Array.from({ length: 12_000 }, (_, i) => makeRecord({ id: requestIdAt(Date.now() - 1_000_000 + i) }))
    for (const r of records) await store.put(owner, r, 60_000)
    const listed = await store.list(owner)
    expect(listed).toHaveLength(10_000)
    expect(listed.at(-1)?.request_id).toBe(records[2000]?.request_id)
    expect(evictedRecords(evictions)).toHaveLength(2000)
    await store.close()
  })

  it('rejects a record above the per-entry bound instead of losing it silently', async () => {
    const store = createGatewayStore({ maxMemoryBytes: 1024 * 1024 })
    const owner = newOwner()
    const error = await store.put(owner, makeRecord({ requestBody: 'x'.repeat(400_000) }), 60_000).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isGatewayError(error) && error.code).toBe('store_unavailable')
    expect(await store.list(owner)).toEqual([])
    await store.close()
  })

  it('reports Keyv errors to onError instead of leaving them unheard', async () => {
    const keyv = new Keyv()
    const map = keyv.store as Map<string, unknown>
    const errors: unknown[] = []
    const store = createGatewayStore({ keyv, onError: (e) => errors.push(e) })
    map.set = () => {
      throw new Error('disk full')
    }
    await expect(store.put(newOwner(), makeRecord(), 60_000)).rejects.toMatchObject({ code: 'store_unavailable' })
    expect(errors.map(String)).toContain('Error: disk full')
    await store.close()
    expect(keyv.listeners('error')).toHaveLength(0)
  })

  it('does not disconnect or clear a Keyv it was given', async () => {
    const keyv = new Keyv()
    await keyv.set('someone-else', 'value')
    const store = createGatewayStore({ keyv })
    await store.put(newOwner(), makeRecord(), 60_000)
    await store.close()
    expect(await keyv.get('someone-else')).toBe('value')
  })
})

describe('LruStoreAdapter', () => {
  it("accepts Keyv's numeric ttl and expires the value", async () => {
    const keyv = new Keyv({ store: new LruStoreAdapter({ maxSize: 1_000_000 }), namespace: 'test' })
    expect(await keyv.set('k', 'v', 50)).toBe(true)
    expect(await keyv.get('k')).toBe('v')
    await sleep(80)
    expect(await keyv.get('k')).toBeUndefined()
  })

  it('keeps values as they are in the default store: no serialisation at all', async () => {
    const { keyv } = createMemoryKeyv(1_000_000)
    const value = { body: 'a "quoted" body' }
    await keyv.set('k', value, 1000)
    expect(await keyv.get('k')).toBe(value)
  })

  it('sizes values in O(1) per string, never below their heap size', () => {
    expect(approxBytes('x'.repeat(1000))).toBeGreaterThanOrEqual(2000)
    expect(approxBytes({ value: '证'.repeat(10), expires: 1 })).toBeGreaterThanOrEqual(20)
  })

  it('clears only its own namespace', async () => {
    const adapter = new LruStoreAdapter({ maxSize: 1_000_000 })
    const mine = new Keyv({ store: adapter, namespace: 'mine' })
    await mine.set('a', '1')
    await adapter.set('other:b', '2')
    await mine.clear()
    expect(await mine.get('a')).toBeUndefined()
    expect(await adapter.get('other:b')).toBe('2')
  })

  it('answers false when a value exceeds maxEntrySize', async () => {
    const adapter = new LruStoreAdapter({ maxSize: 1000 })
    expect(await adapter.set('big', 'x'.repeat(2000))).toBe(false)
    expect(await adapter.set('small', 'x')).toBe(true)
  })
})
