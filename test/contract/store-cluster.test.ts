import type KeyvRedis from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGatewayStore, type GatewayStore } from '../../src/store/gateway-store.js'
import { describeWithPrograms, killAllOwnRedis, refuseSetsInTransactions } from '../support/redis.js'
import { clusterKeyv, type OwnCluster, onNode, startOwnCluster } from '../support/redis-cluster.js'
import { describeStoreContract, makeRecord, newOwner } from './store-contract.js'

const NS = 'cluster'

async function release(store: GatewayStore, keyv: Keyv): Promise<void> {
  await store.close()
  await (keyv.store as KeyvRedis<unknown>).disconnect(true)
}

describeWithPrograms(
  'Redis Cluster store (three masters started by the test)',
  ['redis-server', 'redis-cli'],
  'install redis-server (it brings redis-cli)',
  () => {
    let cluster: OwnCluster

    beforeAll(async () => {
      cluster = await startOwnCluster({ masters: 3 })
    }, 60_000)

    afterAll(async () => {
      await cluster?.stop()
      await killAllOwnRedis()
    })

    describeStoreContract('Redis Cluster', async (options) => {
      const keyv = clusterKeyv(cluster, NS)
      const store = createGatewayStore({ keyv, ...options })
      return {
        store,
        cleanup: () => release(store, keyv),
        failWrites: () => refuseSetsInTransactions((keyv.store as KeyvRedis<unknown>).client),
      }
    })

    describe('Redis Cluster layout', () => {
      it('keeps every key of one owner on one node, and spreads owners over the masters', async () => {
        const keyv = clusterKeyv(cluster, `${NS}-layout`)
        const store = createGatewayStore({ keyv })
        const owners = Array.from({ length: 12 }, () => newOwner())
        for (const owner of owners) await store.put(owner, makeRecord(), 60_000)
        const nodesOf = new Map<string, Set<number>>()
        for (const port of cluster.ports) {
          const keys = await onNode(port, (client) => client.keys(`${NS}-layout::*`))
          for (const key of keys) {
            const owner = /\{([0-9a-f]+)\}/.exec(key)?.[1] as string
            nodesOf.set(owner, (nodesOf.get(owner) ?? new Set()).add(port))
          }
        }
        expect([...nodesOf.keys()].sort()).toEqual([...owners].sort())
        for (const ports of nodesOf.values()) expect(ports.size).toBe(1)
        expect(new Set([...nodesOf.values()].map((ports) => [...ports][0])).size).toBeGreaterThan(1)
        await release(store, keyv)
      })

      it("takes a failed write's entry back from its owner's catalog on the node that holds it", async () => {
        const keyv = clusterKeyv(cluster, `${NS}-withdraw`)
        const errors: unknown[] = []
        const store = createGatewayStore({ keyv, onError: (error) => errors.push(error) })
        const owner = newOwner()
        const kept = makeRecord()
        await store.put(owner, kept, 60_000)
        refuseSetsInTransactions((keyv.store as KeyvRedis<unknown>).client)
        const lost = makeRecord()
        await expect(store.put(owner, lost, 60_000)).rejects.toThrow()
        const catalog = `${NS}-withdraw::idx:{${owner}}`
        const fields = async () => {
          for (const port of cluster.ports) {
            const found = await onNode(port, (client) => client.hKeys(catalog).catch(() => undefined))
            if (found && found.length > 0) return found
          }
          return []
        }
        for (let i = 0; i < 100 && (await fields()).includes(lost.request_id); i++) await new Promise((r) => setTimeout(r, 10))
        expect(await fields()).toEqual([kept.request_id])
        expect(errors).toEqual([])
        await release(store, keyv)
      })
    })
  },
)
