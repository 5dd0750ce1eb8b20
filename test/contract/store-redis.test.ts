import { setTimeout as sleep } from 'node:timers/promises'
import KeyvRedis, { createKeyv, Keyv } from '@keyv/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { isGatewayError } from '../../src/errors.js'
import { createGatewayStore, type GatewayStore } from '../../src/store/gateway-store.js'
import {
  type AdminClient,
  connectAdmin,
  describeWithRedis,
  dropKeys,
  keysMatching,
  killAllOwnRedis,
  killOwnRedis,
  recommendedKeyv as makeKeyv,
  REDIS_URL,
  refuseSetsInTransactions,
  startOwnRedis,
} from '../support/redis.js'
import { describeStoreContract, makeRecord, newOwner, requestIdAt } from './store-contract.js'

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-test-${process.pid}-${Date.now().toString(36)}`

/** Closes the store (which disconnects the Keyv) and destroys whatever connection is still open. */
async function release(store: GatewayStore, keyv: Keyv): Promise<void> {
  await store.close()
  await (keyv.store as KeyvRedis<unknown>).disconnect(true)
}

async function expectFastStoreUnavailable(operation: () => Promise<unknown>, withinMs: number): Promise<void> {
  const started = Date.now()
  const error = await operation().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(isGatewayError(error) && error.code).toBe('store_unavailable')
  expect(Date.now() - started).toBeLessThan(withinMs)
}

await describeWithRedis('Redis store suite', () => {
  let admin: AdminClient

  beforeAll(async () => {
    admin = await connectAdmin()
  })

  afterAll(async () => {
    await dropKeys(admin, `${RUN}*`)
    admin.destroy()
  })

  describeStoreContract('Redis (createKeyv)', async (options) => {
    const keyv = makeKeyv(RUN)
    const store = createGatewayStore({ keyv, ...options })
    return {
      store,
      cleanup: () => release(store, keyv),
      // A SET that Redis refuses when the transaction runs (an invalid expiry, like a write refused for memory)
      // while the rest of the transaction, the catalog entry included, goes through: only the replies tell.
      failWrites: () => refuseSetsInTransactions((keyv.store as KeyvRedis<unknown>).client),
    }
  })

  describe('Redis store', () => {
    it('puts every key under the namespace, the index in a hash and its order in a sorted set, each with a TTL', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const record = makeRecord()
      await store.put(owner, record, 60_000)
      const id = record.request_id
      const keys = (await keysMatching(admin, `${RUN}::*${owner}*`)).sort()
      expect(keys).toEqual(
        [
          `${RUN}::idx:{${owner}}`,
          `${RUN}::ord:{${owner}}`,
          `${RUN}::rec:{${owner}}:${id}`,
          `${RUN}::rec:{${owner}}:${id}:req`,
          `${RUN}::rec:{${owner}}:${id}:res`,
        ].sort(),
      )
      for (const key of keys) {
        const pttl = await admin.pTTL(key)
        expect(pttl).toBeGreaterThan(0)
        expect(pttl).toBeLessThanOrEqual(60_000)
      }
      expect(await admin.type(`${RUN}::idx:{${owner}}`)).toBe('hash')
      expect(await admin.zRange(`${RUN}::ord:{${owner}}`, 0, -1)).toEqual([`${String(record.created_at).padStart(15, '0')}:${id}`])
      // The body is stored as Keyv's JSON of a plain string: escaped once, not twice.
      const stored = await admin.get(`${RUN}::rec:{${owner}}:${id}:req`)
      expect(JSON.parse(stored ?? '')).toMatchObject({ value: record.request.body_raw })
      await release(store, keyv)
    })

    it('writes values that Keyv itself reads back, with Keyv’s expiry', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      // A leading ':' is what Keyv's serialiser escapes; ':base64:' is what it would turn into a Buffer.
      const record = makeRecord({ requestBody: ':base64:AAAA', responseBody: ':colon first' })
      const before = Date.now()
      await store.put(owner, record, 60_000)
      const detail = `rec:{${owner}}:${record.request_id}`
      expect(await keyv.get(`${detail}:req`)).toBe(':base64:AAAA')
      expect(await keyv.get(`${detail}:res`)).toBe(':colon first')
      expect(await keyv.get<{ record: { request_id: string } }>(detail)).toMatchObject({ record: { request_id: record.request_id } })
      const raw = await keyv.get(`${detail}:res`, { raw: true })
      expect(raw?.expires).toBeGreaterThanOrEqual(before + 60_000)
      expect(raw?.expires).toBeLessThanOrEqual(Date.now() + 60_000)
      await release(store, keyv)
    })

    it('lists exactly 200 records written concurrently by two processes’ stores', async () => {
      const keyvA = makeKeyv(RUN)
      const keyvB = makeKeyv(RUN)
      const storeA = createGatewayStore({ keyv: keyvA })
      const storeB = createGatewayStore({ keyv: keyvB })
      const owner = newOwner()
      const records = Array.from({ length: 200 }, () => makeRecord())
      await Promise.all(records.map((r, i) => (i % 2 === 0 ? storeA : storeB).put(owner, r, 60_000)))
      for (const store of [storeA, storeB]) {
        const ids = (await store.list(owner)).map((s) => s.request_id)
        expect(ids).toHaveLength(200)
        expect(new Set(ids)).toEqual(new Set(records.map((r) => r.request_id)))
      }
      expect(await storeB.deleteAll(owner, { dryRun: false })).toBe(200)
      expect(await storeA.list(owner)).toEqual([])
      await release(storeA, keyvA)
      await release(storeB, keyvB)
    })

    it('keeps two namespaces apart on one Redis', async () => {
      const keyvA = makeKeyv(`${RUN}-a`)
      const keyvB = makeKeyv(`${RUN}-b`)
      const storeA = createGatewayStore({ keyv: keyvA })
      const storeB = createGatewayStore({ keyv: keyvB })
      const owner = newOwner()
      const record = makeRecord()
      await storeA.put(owner, record, 60_000)
      expect(await storeB.list(owner)).toEqual([])
      expect(await storeB.get(owner, record.request_id)).toBeUndefined()
      expect(await storeB.deleteAll(owner, { dryRun: false })).toBe(0)
      expect(await storeA.list(owner)).toHaveLength(1)
      await release(storeA, keyvA)
      await release(storeB, keyvB)
    })

    it('follows the key prefixes of new Keyv(new KeyvRedis(url), { namespace })', async () => {
      const namespace = `${RUN}-dbl`
      const keyv = new Keyv(new KeyvRedis(REDIS_URL, { connectionTimeout: 2000 }), { namespace })
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const record = makeRecord()
      await store.put(owner, record, 60_000)
      expect(await admin.type(`${namespace}::${namespace}:idx:{${owner}}`)).toBe('hash')
      expect(await store.get(owner, record.request_id)).toEqual(record)
      expect(await store.list(owner)).toHaveLength(1)
      expect(await store.delete(owner, record.request_id)).toBe(true)
      expect(await keysMatching(admin, `${namespace}*${owner}*`)).toEqual([])
      await release(store, keyv)
    })

    it('drops index entries whose detail key is gone', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const kept = makeRecord()
      const lost = makeRecord()
      await store.put(owner, kept, 60_000)
      await store.put(owner, lost, 60_000)
      await admin.unlink(`${RUN}::rec:{${owner}}:${lost.request_id}`)
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([kept.request_id])
      expect(Object.keys(await admin.hGetAll(`${RUN}::idx:{${owner}}`))).toEqual([kept.request_id])
      expect(await store.get(owner, lost.request_id)).toBeUndefined()
      await release(store, keyv)
    })

    it('indexes a catalog written without its order set on its first page, dropping a malformed entry, and pages it', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const base = Date.now() - 60_000
      const records = [0, 1, 2].map((i) =>
        makeRecord({ id: requestIdAt(base + i * 1000), createdAt: Math.floor((base + i * 1000) / 1000) }),
      )
      for (const r of records) await store.put(owner, r, 60_000)
      // What an older version left: the hash alone, here with one entry that is not one.
      await admin.unlink(`${RUN}::ord:{${owner}}`)
      await admin.hSet(`${RUN}::idx:{${owner}}`, 'not-an-entry', '{')
      const page = await store.listPage(owner, { limit: 2 })
      expect(page?.items.map((s) => s.request_id)).toEqual([records[2]?.request_id, records[1]?.request_id])
      expect(page?.hasMore).toBe(true)
      expect(await admin.zCard(`${RUN}::ord:{${owner}}`)).toBe(3)
      expect(Number(await admin.hExists(`${RUN}::idx:{${owner}}`, 'not-an-entry'))).toBe(0)
      expect(await admin.pTTL(`${RUN}::ord:{${owner}}`)).toBeGreaterThan(30_000)
      const rest = await store.listPage(owner, { limit: 2, after: records[1]?.request_id })
      expect(rest).toEqual({ items: [expect.objectContaining({ request_id: records[0]?.request_id })], hasMore: false })
      await release(store, keyv)
    })

    it('drops an order member whose entry is gone, and lists around it', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const [older, newer] = [makeRecord({ createdAt: 1_700_000_000 }), makeRecord({ createdAt: 1_700_000_100 })]
      await store.put(owner, older, 60_000)
      await store.put(owner, newer, 60_000)
      await admin.hDel(`${RUN}::idx:{${owner}}`, newer.request_id)
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([older.request_id])
      expect(await admin.zCard(`${RUN}::ord:{${owner}}`)).toBe(1)
      await release(store, keyv)
    })

    it('keeps the index hash alive as long as its longest-lived entry', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv })
      const owner = newOwner()
      const long = makeRecord()
      await store.put(owner, long, 60_000)
      await store.put(owner, makeRecord(), 300)
      expect(await admin.pTTL(`${RUN}::idx:{${owner}}`)).toBeGreaterThan(30_000)
      await sleep(450)
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([long.request_id])
      await release(store, keyv)
    })

    it('keeps a record listed when the withdrawal of a failed attempt reaches Redis after the retry that wrote it', async () => {
      // What a cluster failover can do: the failed attempt's withdrawal is re-routed and lands after the retry.
      const keyv = makeKeyv(RUN)
      const client = (keyv.store as KeyvRedis<unknown>).client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      const store = createGatewayStore({ keyv, onError: () => {} })
      const owner = newOwner()
      const record = makeRecord()
      const writes = client.multi as unknown as () => object
      const removals = ['hDel', 'zRem', 'eval'].map((name) => [name, client[name]!.bind(client)] as const)
      let letThrough!: () => void
      const held = new Promise<void>((resolve) => {
        letThrough = resolve
      })
      const landed: Array<Promise<unknown>> = []
      for (const [name, send] of removals) {
        client[name] = (...args: unknown[]) => {
          const sent = held.then(() => send(...args))
          landed.push(sent)
          return sent
        }
      }
      refuseSetsInTransactions(client as unknown as { multi(): object })
      await expect(store.put(owner, record, 60_000)).rejects.toSatisfy(isGatewayError)
      Object.assign(client, { multi: writes }, Object.fromEntries(removals))
      await store.put(owner, record, 60_000)
      letThrough()
      await Promise.allSettled(landed)
      expect(landed.length).toBeGreaterThan(0)
      expect((await store.list(owner)).map((s) => s.request_id)).toEqual([record.request_id])
      expect((await store.get(owner, record.request_id))?.request_id).toBe(record.request_id)
      // A failed attempt whose values are not there is still unlisted.
      const lost = makeRecord()
      refuseSetsInTransactions(client as unknown as { multi(): object })
      await expect(store.put(owner, lost, 60_000)).rejects.toSatisfy(isGatewayError)
      Object.assign(client, { multi: writes })
      for (let i = 0; i < 100 && Number(await admin.hExists(`${RUN}::idx:{${owner}}`, lost.request_id)) === 1; i++) await sleep(10)
      expect(Object.keys(await admin.hGetAll(`${RUN}::idx:{${owner}}`))).toEqual([record.request_id])
      await release(store, keyv)
    })

    it('does not mistake a failed read for an absent record', async () => {
      const keyv = makeKeyv(RUN)
      const store = createGatewayStore({ keyv, onError: () => {} })
      const owner = newOwner()
      const record = makeRecord()
      await store.put(owner, record, 60_000)
      // KeyvRedis catches a failing GET and Keyv answers undefined, exactly as for a missing key. The store reads
      // through a copy of the client that answers with bytes: its GETs fail too.
      const get = async () => {
        throw new Error('LOADING Redis is loading the dataset in memory')
      }
      Object.assign((keyv.store as KeyvRedis<unknown>).client, { get, withTypeMapping: () => ({ get }) })
      await expectFastStoreUnavailable(() => store.get(owner, record.request_id), 3000)
      expect(await store.get(owner, makeRecord().request_id)).toBeUndefined()
      await release(store, keyv)
    })

    describe('with a Redis out of memory', () => {
      afterAll(killAllOwnRedis)

      it('refuses the record that does not fit (noeviction) and keeps every record taken before it', async () => {
        const port = await freePort()
        await startOwnRedis(port, { args: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] })
        const keyv = makeKeyv(RUN, `redis://127.0.0.1:${port}`)
        const store = createGatewayStore({ keyv, onError: () => {} })
        const owner = newOwner()
        const kept: string[] = []
        let refused: unknown
        let last = makeRecord()
        for (let i = 0; i < 100 && refused === undefined; i++) {
          last = makeRecord({ responseBody: `"${'x'.repeat(256 * 1024)}"` })
          refused = await store.put(owner, last, 60_000).then(
            () => void kept.push(last.request_id),
            (error: unknown) => error,
          )
        }
        expect(isGatewayError(refused) && refused.code).toBe('store_unavailable')
        expect(kept.length).toBeGreaterThan(0)
        expect(new Set((await store.list(owner)).map((s) => s.request_id))).toEqual(new Set(kept))
        expect(await store.get(owner, last.request_id)).toBeUndefined()
        for (const id of kept) expect((await store.get(owner, id))?.request_id).toBe(id)
        await release(store, keyv)
      })
    })

    describe('with a Redis that stops', () => {
      afterAll(killAllOwnRedis)

      const configs: Array<[string, (ns: string, url: string) => Keyv]> = [
        ['recommended client options', (ns, url) => makeKeyv(ns, url)],
        ['plain createKeyv(url) defaults (offline queue, endless reconnect)', (ns, url) => createKeyv(url, { namespace: ns })],
      ]
      for (const [label, build] of configs) {
        it(`rejects with store_unavailable within seconds: ${label}`, async () => {
          const port = await freePort()
          const child = await startOwnRedis(port)
          const keyv = build(RUN, `redis://127.0.0.1:${port}`)
          const store = createGatewayStore({ keyv, onError: () => {} })
          const owner = newOwner()
          const record = makeRecord()
          await store.put(owner, record, 60_000)
          expect(await store.get(owner, record.request_id)).toEqual(record)
          await killOwnRedis(child)
          await sleep(200)
          await expectFastStoreUnavailable(() => store.put(owner, makeRecord(), 60_000), 3000)
          await expectFastStoreUnavailable(() => store.get(owner, record.request_id), 3000)
          await expectFastStoreUnavailable(() => store.list(owner), 3000)
          await expectFastStoreUnavailable(() => store.lookup(owner, record.request_body_hash), 3000)
          await expectFastStoreUnavailable(() => store.delete(owner, record.request_id), 3000)
          await expectFastStoreUnavailable(() => store.deleteAll(owner, { dryRun: true }), 3000)
          // Back up (empty, nothing persisted): the same store works again once the client reconnects.
          await startOwnRedis(port)
          const started = Date.now()
          while (
            !(await store.list(owner).then(
              () => true,
              () => false,
            ))
          ) {
            expect(Date.now() - started).toBeLessThan(8000)
            await sleep(100)
          }
          expect(await store.get(owner, record.request_id)).toBeUndefined()
          await release(store, keyv)
        })

        it(`rejects with store_unavailable within seconds when Redis was never up, then recovers: ${label}`, async () => {
          const port = await freePort()
          const keyv = build(RUN, `redis://127.0.0.1:${port}`)
          const store = createGatewayStore({ keyv, onError: () => {} })
          // Until Redis has been up once, each call waits for the first connection (2 s at most), so a slow cold
          // start within the writer's retries loses nothing; then it fails.
          await expectFastStoreUnavailable(() => store.put(newOwner(), makeRecord(), 60_000), 6000)
          await expectFastStoreUnavailable(() => store.list(newOwner()), 3000)
          await startOwnRedis(port)
          const owner = newOwner()
          const record = makeRecord()
          const started = Date.now()
          for (;;) {
            try {
              await store.put(owner, record, 60_000)
              break
            } catch (error) {
              expect(isGatewayError(error) && error.code).toBe('store_unavailable')
              expect(Date.now() - started).toBeLessThan(8000)
              await sleep(100)
            }
          }
          expect(await store.get(owner, record.request_id)).toEqual(record)
          await release(store, keyv)
        })

        it(`closes without hanging while Redis is down and a command waits: ${label}`, async () => {
          const port = await freePort()
          const child = await startOwnRedis(port)
          const keyv = build(RUN, `redis://127.0.0.1:${port}`)
          const store = createGatewayStore({ keyv, onError: () => {} })
          await store.put(newOwner(), makeRecord(), 60_000)
          await killOwnRedis(child)
          await sleep(200)
          // Another user of the same Keyv: with the offline queue this command waits for a Redis that is gone,
          // and a graceful disconnect would wait for it forever.
          void keyv.get('waiting').catch(() => {})
          await sleep(100)
          const started = Date.now()
          await store.close()
          expect(Date.now() - started).toBeLessThan(10_000)
          expect((keyv.store as KeyvRedis<unknown>).client.isOpen).toBe(false)
        })
      }
    })
  })
})
