import { createClient } from '@keyv/redis'
import { afterAll, beforeAll } from 'vitest'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { type Chooser, type CuttingProxy, type Fate, startCuttingProxy } from './cutting-proxy.js'
import { ensureBuilt, type GatewayProcess, startGatewayProcess, stopAllGatewayProcesses } from './gateway-process.js'
import { type AdminClient, keysMatching, REDIS_URL } from './redis.js'

/** The client's key at the gateways. */
export const CLIENT_KEY = 'sk-client-owner'

/**
 * What the client tests run against: a mock upstream that counts calls, two gateway processes sharing one Redis
 * namespace, and a cutting proxy in front of each (the two base URLs). Each proxy's fate is switched by `cut`.
 */
export interface ClientChain {
  mock: MockUpstream
  gateways: [GatewayProcess, GatewayProcess]
  proxies: [CuttingProxy, CuttingProxy]
  /** The two base URLs, the main one first. */
  bases: [string, string]
  /** From now on the proxies choose with these (their logs are cleared, so `n` counts from 0 again). */
  cut(main: Chooser, alternate?: Chooser): void
  /** How many upstream calls carried `marker`. */
  upstreamCalls(marker: string): number
}

/** Lets every request through. */
export const PASS: Chooser = () => ({ kind: 'pass' })

/** Gives every request `fate`. */
export const always =
  (fate: Fate): Chooser =>
  () =>
    fate

/** Starts the chain before the calling file's tests and stops it after them; `mockDelayMs` paces every upstream answer. */
export function useClientChain(run: string, mockDelayMs = 0): ClientChain {
  const chain = {} as ClientChain
  const choosers: [Chooser, Chooser] = [PASS, PASS]
  let admin: AdminClient | undefined
  beforeAll(async () => {
    await ensureBuilt()
    admin = createClient({ url: REDIS_URL })
    admin.on('error', () => {})
    await admin.connect()
    chain.mock = await startMockUpstream({ delayMs: mockDelayMs })
    const settings = { redisUrl: REDIS_URL, namespace: run, upstreamUrl: chain.mock.url, apiKeys: [CLIENT_KEY] }
    chain.gateways = await Promise.all([startGatewayProcess(settings), startGatewayProcess(settings)])
    const proxyFor = (i: 0 | 1) => startCuttingProxy(chain.gateways[i].url, (request) => choosers[i](request))
    chain.proxies = await Promise.all([proxyFor(0), proxyFor(1)])
    chain.bases = [chain.proxies[0].url, chain.proxies[1].url]
    chain.cut = (main, alternate = PASS) => {
      choosers[0] = main
      choosers[1] = alternate
      for (const proxy of chain.proxies) proxy.log.length = 0
    }
    chain.upstreamCalls = (marker) => chain.mock.requests.filter((r) => r.body.includes(marker)).length
  }, 240_000)

  afterAll(async () => {
    for (const proxy of chain.proxies ?? []) await proxy.close()
    await stopAllGatewayProcesses()
    await chain.mock?.close()
    if (admin?.isOpen) {
      const keys = await keysMatching(admin, `${run}*`)
      if (keys.length > 0) await admin.unlink(keys)
      admin.destroy()
    }
  })
  return chain
}

/** Runs `task` over `items` with at most `width` at once; resolves with the results in order. */
export async function inPool<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await task(items[i] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker))
  return results
}
