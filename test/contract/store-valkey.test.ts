import type KeyvRedis from '@keyv/redis'
import type Keyv from 'keyv'
import { afterAll, beforeAll } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGatewayStore, type GatewayStore } from '../../src/store/gateway-store.js'
import { describeWithPrograms, killAllOwnRedis, recommendedKeyv, refuseSetsInTransactions, startOwnRedis } from '../support/redis.js'
import { describeStoreContract } from './store-contract.js'

async function release(store: GatewayStore, keyv: Keyv): Promise<void> {
  await store.close()
  await (keyv.store as KeyvRedis<unknown>).disconnect(true)
}

describeWithPrograms('Valkey store (a valkey-server started by the test)', ['valkey-server'], 'install valkey-server', () => {
  let url: string

  beforeAll(async () => {
    const port = await freePort()
    await startOwnRedis(port, { program: 'valkey-server' })
    url = `redis://127.0.0.1:${port}`
  }, 30_000)

  afterAll(killAllOwnRedis)

  describeStoreContract('Valkey', async (options) => {
    const keyv = recommendedKeyv('valkey', url)
    const store = createGatewayStore({ keyv, ...options })
    return {
      store,
      cleanup: () => release(store, keyv),
      failWrites: () => refuseSetsInTransactions((keyv.store as KeyvRedis<unknown>).client),
    }
  })
})
