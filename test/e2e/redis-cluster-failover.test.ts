import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ownerOfKey } from '../../src/http/auth.js'
import { startMockUpstream } from '../../src/testing/index.js'
import { ensureBuilt, startGatewayProcess, stopAllGatewayProcesses } from '../support/gateway-process.js'
import { describeWithPrograms, killAllOwnRedis } from '../support/redis.js'
import { type OwnCluster, onNode, startOwnCluster } from '../support/redis-cluster.js'
import { contentOf, inBatches, interrupt, KEY, recoveries, usages, waitForUsages } from '../support/redis-storm.js'

const NS = 'failover'
const PER_WAVE = 10

describeWithPrograms(
  'Redis Cluster failover (three masters and three replicas started by the test)',
  ['redis-server', 'redis-cli'],
  'install redis-server',
  () => {
    let cluster: OwnCluster | undefined
    let mock: Awaited<ReturnType<typeof startMockUpstream>> | undefined

    beforeAll(async () => {
      await ensureBuilt()
      mock = await startMockUpstream({ record: false })
      cluster = await startOwnCluster({ masters: 3, replicas: 1 })
    }, 240_000)

    afterAll(async () => {
      await stopAllGatewayProcesses()
      await cluster?.stop()
      await killAllOwnRedis()
      await mock?.close()
    })

    it('loses no acknowledged record when a replica takes over its master while records are written', { timeout: 180_000 }, async () => {
      const c = cluster!
      const gw = await startGatewayProcess({
        redisUrl: '',
        clusterNodes: c.rootNodes.map((node) => node.url),
        namespace: NS,
        upstreamUrl: mock!.url,
        apiKeys: [KEY],
      })
      // Every record of one owner lives in its catalog's slot: the failover is of the master that serves it.
      const catalog = `${NS}::idx:{${ownerOfKey(KEY)}}`
      const slot = Number(await onNode(c.ports[0]!, (client) => client.sendCommand(['CLUSTER', 'KEYSLOT', catalog])))
      const before = await c.nodes()
      const master = before.find((n) => n.slots.some(([from, to]) => slot >= from && slot <= to))
      const replica = before.find((n) => n.role === 'replica' && n.masterId === master?.id)
      expect(master && replica).toBeTruthy()

      const switched = async () => {
        const now = await c.nodes()
        return now.find((n) => n.id === replica!.id)?.role === 'master' && now.find((n) => n.id === master!.id)?.role === 'replica'
      }
      const waves: Array<Promise<unknown>> = []
      const wave = async () => {
        const n = waves.length
        waves.push(Promise.all(Array.from({ length: PER_WAVE }, (_, i) => interrupt(gw, `w${n}-${i}`, KEY, 200))))
        await sleep(150)
      }
      // Interruptions go on before, during and after the switch: the failover is asked for while some are in flight.
      for (let i = 0; i < 4; i++) await wave()
      expect(await onNode(replica!.port, (client) => client.sendCommand(['CLUSTER', 'FAILOVER']))).toBe('OK')
      while (!(await switched())) {
        expect(waves.length, 'the failover did not complete').toBeLessThan(200)
        await wave()
      }
      for (let i = 0; i < 4; i++) await wave()
      const total = waves.length * PER_WAVE
      await Promise.all(waves)
      await waitForUsages(gw, total, 60_000)

      const stored = usages(gw).filter((u) => u.recovered)
      const reads = await inBatches(stored, 20, async (u) => ({ id: u.requestId, res: await recoveries(gw, `/${u.requestId}`) }))
      for (const { id, res } of reads) {
        expect(res.status, `acknowledged record ${id}`).toBe(200)
        expect(contentOf(res.json)).toMatch(/^w\d+-\d+$/)
      }
      const listed = new Set((await recoveries(gw)).json.items.map((item: { request_id: string }) => item.request_id))
      for (const u of stored) expect(listed.has(u.requestId), `${u.requestId} listed`).toBe(true)
      // The new master holds every acknowledged record's catalog entry, and records after the switch are kept again:
      // the gateway follows the cluster to the new master.
      expect(await onNode(replica!.port, (client) => client.hLen(catalog))).toBe(stored.length)
      expect(
        usages(gw)
          .slice(-PER_WAVE)
          .every((u) => u.recovered),
      ).toBe(true)
      console.info(`failover: ${stored.length} of ${total} interruptions acknowledged as stored`)
    })
  },
)
