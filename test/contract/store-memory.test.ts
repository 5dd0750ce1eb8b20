import { setTimeout as sleep } from 'node:timers/promises'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { approxBytes, createMemoryKeyv, LruStoreAdapter } from '../../src/recovery/store/lru-adapter.js'
import { createRecoveryStore } from '../../src/recovery/store/recovery-store.js'
import { describeStoreContract, makeRecord, newOwner } from './store-contract.js'

describeStoreContract(
  'default in-memory store',
  async () => {
    const store = createRecoveryStore({})
    return { store, cleanup: () => store.close() }
    // Nothing can reach the private LRU to make it fail; the oversize test below covers a rejected write.
  },
  { failWrites: false },
)

describeStoreContract('user-supplied new Keyv() (Map store, JSON serialiser)', async () => {
  const keyv = new Keyv()
  const map = keyv.store as Map<string, unknown>
  const store = createRecoveryStore({ keyv })
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
    const store = createRecoveryStore({ maxMemoryBytes: 2 * 1024 * 1024 })
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

  it('rejects a record above the per-entry bound instead of losing it silently', async () => {
    const store = createRecoveryStore({ maxMemoryBytes: 1024 * 1024 })
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
    const store = createRecoveryStore({ keyv, onError: (e) => errors.push(e) })
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
    const store = createRecoveryStore({ keyv })
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
