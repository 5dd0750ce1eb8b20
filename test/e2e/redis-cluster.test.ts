import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { startMockUpstream } from '../../src/testing/index.js'
import { ensureBuilt, type GatewayProcessEnv, startGatewayProcess, stopAllGatewayProcesses } from '../support/gateway-process.js'
import { describeWithPrograms, keysMatching, killAllOwnRedis, startOwnRedis } from '../support/redis.js'
import { type OwnCluster, onNode, startOwnCluster } from '../support/redis-cluster.js'
import { KEY, twoProcessStorm } from '../support/redis-storm.js'

type Mock = Awaited<ReturnType<typeof startMockUpstream>>

/** Servers a suite started: how gateway processes reach them, how many keys a namespace holds, how to stop them. */
interface Started {
  settings: Partial<GatewayProcessEnv>
  keyCount: (namespace: string) => Promise<number>
  stop: () => Promise<void>
}

/** Two gateway processes on one store, as in the Redis suite, on servers this file starts itself (once per suite). */
function stormSuite(title: string, programs: string[], install: string, start: () => Promise<Started>): void {
  describeWithPrograms(title, programs, install, () => {
    let mock: Mock | undefined
    let store: Started | undefined

    beforeAll(async () => {
      await ensureBuilt()
      mock = await startMockUpstream({ record: false })
      store = await start()
    }, 240_000)

    afterEach(stopAllGatewayProcesses)

    afterAll(async () => {
      await stopAllGatewayProcesses()
      await store?.stop()
      await killAllOwnRedis()
      await mock?.close()
    })

    it('keeps 200 interruptions spread over two processes as exactly 200 records, each listed once and readable through both', {
      timeout: 120_000,
    }, async () => {
      const settings = { redisUrl: '', namespace: 'storm', upstreamUrl: mock!.url, apiKeys: [KEY], ...store!.settings }
      const [a, b] = await Promise.all([startGatewayProcess(settings), startGatewayProcess(settings)])
      await twoProcessStorm(a, b, () => store!.keyCount('storm'))
      expect(a.stderr()).toBe('')
      expect(b.stderr()).toBe('')
    })
  })
}

stormSuite(
  'Redis Cluster end to end (three masters started by the test)',
  ['redis-server', 'redis-cli'],
  'install redis-server',
  async () => {
    const cluster: OwnCluster = await startOwnCluster({ masters: 3 })
    return {
      settings: { clusterNodes: cluster.rootNodes.map((node) => node.url) },
      keyCount: async (namespace) => {
        let count = 0
        for (const port of cluster.ports) count += (await onNode(port, (client) => client.keys(`${namespace}::*`))).length
        return count
      },
      stop: () => cluster.stop(),
    }
  },
)

stormSuite('Valkey end to end (a valkey-server started by the test)', ['valkey-server'], 'install valkey-server', async () => {
  const port = await freePort()
  await startOwnRedis(port, { program: 'valkey-server' })
  return {
    settings: { redisUrl: `redis://127.0.0.1:${port}` },
    keyCount: (namespace) => onNode(port, async (client) => (await keysMatching(client, `${namespace}::*`)).length),
    stop: killAllOwnRedis,
  }
})
