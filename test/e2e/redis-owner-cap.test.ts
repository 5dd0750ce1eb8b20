import diagnosticsChannel from 'node:diagnostics_channel'
import { createClient } from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import type { Gateway } from '../../src/gateway.js'
import { ownerOfKey } from '../../src/http/auth.js'
import { createGatewayStore, type GatewayStore } from '../../src/store/gateway-store.js'
import { startMockUpstream } from '../../src/testing/index.js'
import { makeRecord, requestIdAt } from '../contract/store-contract.js'
import { chatBody } from '../support/bodies.js'
import { collectingGateway, type LoggedLine } from '../support/collecting-gateway.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import {
  type AdminClient,
  describeWithRedis,
  gatewayCommandCalls,
  killAllOwnRedis,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { serve } from '../support/servers.js'

/** The channel a trim reports its start and end on (named literally: a gateway without it publishes nothing). */
const TRIM_CHANNEL = 'model-gateway:records:trim'
const EVICTED = 'model-gateway: recovery records evicted before their time'
const UNCONFIRMED = 'model-gateway: recovery record could not be confirmed'
const CAP = 50

await describeWithRedis('Redis: an owner at its record cap, and one with 20 000 records', () => {
  let url: string
  let admin: AdminClient
  let mock: Awaited<ReturnType<typeof startMockUpstream>>

  beforeAll(async () => {
    const port = await freePort()
    await startOwnRedis(port)
    url = `redis://127.0.0.1:${port}`
    admin = createClient({ url })
    admin.on('error', () => {})
    await admin.connect()
    mock = await startMockUpstream({ record: false })
  }, 60_000)

  afterAll(async () => {
    admin?.destroy()
    await mock?.close()
    await killAllOwnRedis()
  })

  async function onGateway(
    namespace: string,
    maxRecordsPerOwner: number,
    run: (at: { url: string; logs: LoggedLine[]; usage: ReturnType<typeof collectingGateway>['usage']; keyv: Keyv }) => Promise<void>,
  ): Promise<void> {
    const keyv = recommendedKeyv(namespace, url)
    const { gateway, logs, usage } = collectingGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      store: keyv,
      recovery: { maxRecordsPerOwner },
    })
    const server = await serve(nodeHandler(gateway as Gateway))
    try {
      await run({ url: server.url, logs, usage, keyv })
    } finally {
      await server.close()
      await gateway.close()
    }
  }

  it('trims an owner at its cap once at a time under 200 interruptions arriving 50 at once: one log line per trim, list always answering', {
    timeout: 120_000,
  }, async () => {
    await onGateway('cap', CAP, async ({ url: gw, logs, usage }) => {
      const trims: Array<{ phase: string; evicted: number }> = []
      let running = 0
      let mostAtOnce = 0
      const onTrim = (message: unknown) => {
        const { phase, evicted } = message as { phase: string; evicted: number }
        trims.push({ phase, evicted })
        running += phase === 'start' ? 1 : -1
        mostAtOnce = Math.max(mostAtOnce, running)
      }
      diagnosticsChannel.subscribe(TRIM_CHANNEL, onTrim)
      const listStatuses: number[] = []
      let listing = true
      const poll = (async () => {
        while (listing) listStatuses.push((await call(`${gw}/v1/recoveries`, { headers: bearer(KEY_A) })).status)
      })()
      try {
        const interrupt = (content: string) =>
          sendThenAbort(`${gw}/v1/chat/completions`, {
            headers: bearer(KEY_A),
            body: JSON.stringify(chatBody(content, { mock: { delay_ms: 300 } })),
            afterMs: 30,
          })
        // The owner at its cap first, then four bursts of 50 whose records are all written at about the same moment.
        for (let burst = 0; burst < 5; burst++) {
          await Promise.all(Array.from({ length: 50 }, (_, i) => interrupt(`burst ${burst} call ${i}`)))
          await eventually(() => usage.length >= (burst + 1) * 50, 30_000)
        }
        // The last rounds of trimming may still run after the last write was taken.
        await eventually(async () => running === 0 && (await call(`${gw}/v1/recoveries`, { headers: bearer(KEY_A) })).json.count === CAP)
      } finally {
        listing = false
        await poll
        diagnosticsChannel.unsubscribe(TRIM_CHANNEL, onTrim)
      }
      expect(usage.every((u) => u.recovered)).toBe(true)
      expect(logs.filter((l) => l.message === UNCONFIRMED)).toEqual([])
      const listed = await call(`${gw}/v1/recoveries`, { headers: bearer(KEY_A) })
      expect(listed.json.count).toBe(CAP)
      // The 50 newest are the ones kept.
      const newest = usage.slice(-CAP).map((u) => u.requestId)
      expect(new Set(listed.json.items.map((i: { request_id: string }) => i.request_id))).toEqual(new Set(newest))
      expect(listStatuses.length).toBeGreaterThan(0)
      expect(listStatuses.every((s) => s === 200)).toBe(true)

      // At most one trim of the owner at a time, and every trim logged once, with a count; 200 evictions in all, each once.
      const ended = trims.filter((t) => t.phase === 'end')
      expect(mostAtOnce).toBe(1)
      expect(ended.length).toBeGreaterThanOrEqual(1)
      const lines = logs.filter((l) => l.message === EVICTED)
      console.log(
        `trims: ${ended.length}, most at once: ${mostAtOnce}, eviction log lines: ${lines.length}, list calls during the bursts: ${listStatuses.length}`,
      )
      // Never more lines than trims, nor than evictions (the old code logged 1 352 lines for these 200).
      expect(lines.length).toBeLessThanOrEqual(ended.length)
      expect(lines.length).toBeLessThanOrEqual(200)
      expect(lines.reduce((n, l) => n + Number(l.meta?.count), 0)).toBe(200)
      expect(ended.reduce((n, t) => n + t.evicted, 0)).toBe(200)
      const loggedIds = lines.flatMap((l) => l.meta?.requestIds as string[])
      expect(new Set(loggedIds).size).toBe(loggedIds.length)
      expect(lines.every((l) => l.meta?.reason === 'owner_record_limit')).toBe(true)
    })
  })

  it('lets one of two stores trim an owner at a time (a short lock key), the catalog ending at its cap', { timeout: 60_000 }, async () => {
    const owner = ownerOfKey('sk-two-stores')
    const running: string[] = []
    let mostAtOnce = 0
    const evicted: string[] = []
    const stores = ['a', 'b'].map((name) =>
      createGatewayStore({
        keyv: recommendedKeyv('two-stores', url),
        ownerLimits: { maxRecords: CAP, maxBytes: 1 << 30 },
        onEvict: (e) => evicted.push(...e.requestIds),
        onTrim: ({ phase }) => {
          if (phase === 'start') running.push(name)
          else running.splice(running.indexOf(name), 1)
          mostAtOnce = Math.max(mostAtOnce, running.length)
        },
      }),
    )
    const base = Date.now() - 100_000
    const records = Array.from({ length: 250 }, (_, i) => makeRecord({ id: requestIdAt(base + i) }))
    try {
      for (let first = 0; first < records.length; first += 50)
        await Promise.all(records.slice(first, first + 50).map((r, i) => (stores[i % 2] as GatewayStore).put(owner, r, 60_000)))
      // A write that found the other store trimming left the rest to it: one more write once both are idle settles it.
      await eventually(() => running.length === 0)
      await (stores[0] as GatewayStore).put(owner, makeRecord({ id: requestIdAt(base + 1000) }), 60_000)
      await eventually(() => running.length === 0)
      expect(mostAtOnce).toBe(1)
      expect(new Set(evicted).size).toBe(evicted.length)
      expect(await (stores[1] as GatewayStore).list(owner)).toHaveLength(CAP)
      expect(await admin.exists(`two-stores::lock:{${owner}}:trim`)).toBe(0)
    } finally {
      await Promise.all(stores.map((s) => s.close()))
    }
  })

  it('answers ?limit=10 from 20 000 records with a few Redis commands, and the whole list in order', {
    timeout: 180_000,
  }, async () => {
    const owner = ownerOfKey(KEY_A)
    const namespace = 'big'
    const seeding = recommendedKeyv(namespace, url)
    const seeder = createGatewayStore({ keyv: seeding, ownerLimits: { maxRecords: 1_000_000, maxBytes: 1 << 30 } })
    const total = 20_000
    const base = Date.now() - total * 10
    const ids = Array.from({ length: total }, (_, i) => requestIdAt(base + i * 10))
    for (let first = 0; first < total; first += 500) {
      await Promise.all(
        ids
          .slice(first, first + 500)
          .map((id, j) => seeder.put(owner, makeRecord({ id, createdAt: Math.floor((base + (first + j) * 10) / 1000) }), 600_000)),
      )
    }
    await seeder.close()
    const newestFirst = [...ids].reverse()

    await onGateway(namespace, 1_000_000, async ({ url: gw }) => {
      await admin.configResetStat()
      const first = await call(`${gw}/v1/recoveries?limit=10`, { headers: bearer(KEY_A) })
      expect(first.status).toBe(200)
      expect(first.json.items.map((i: { request_id: string }) => i.request_id)).toEqual(newestFirst.slice(0, 10))
      expect(first.json.has_more).toBe(true)
      const second = await call(`${gw}/v1/recoveries?limit=10&after=${newestFirst[9]}`, { headers: bearer(KEY_A) })
      expect(second.json.items.map((i: { request_id: string }) => i.request_id)).toEqual(newestFirst.slice(10, 20))
      const sent = await gatewayCommandCalls(admin)
      const commands = [...sent.values()].reduce((a, b) => a + b, 0)
      // Two pages: a handful of commands each (order check, ZRANGE, HMGET, EXISTS; HGET for `after`), never a walk.
      expect(sent.get('hscan') ?? 0).toBe(0)
      expect(commands).toBeLessThanOrEqual(16)

      // The whole list, read in order (no sort of it all) and serialised in slices (test/unit/recovery-list-text.test.ts).
      const whole = await call(`${gw}/v1/recoveries`, { headers: bearer(KEY_A) })
      expect(whole.json.count).toBe(total)
      expect(whole.json.items.map((i: { request_id: string }) => i.request_id)).toEqual(newestFirst)
    })
  })
})
