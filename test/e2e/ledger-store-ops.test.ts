import Keyv from 'keyv'
import { afterEach, describe, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, type LedgerChain, startLedgerChain } from '../support/ledger.js'

// The happy path without limits touches no store, as before the ledger; limits on a store that is not Redis live in
// this process and touch none either.

/** A Keyv over a Map that counts every operation the gateway asks of its store. */
function countingKeyv(): { keyv: Keyv; ops: () => number } {
  let ops = 0
  const map = new Map<string, unknown>()
  const counted = new Proxy(map, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (name === 'get' || name === 'set' || name === 'delete' || name === 'has' || name === 'clear') ops++
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { keyv: new Keyv({ store: counted }), ops: () => ops }
}

let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

async function callEveryDialect(c: LedgerChain): Promise<void> {
  for (const d of DIALECTS) {
    for (const stream of [false, true]) {
      const res = await call(`${c.url}${d.path(stream)}`, { headers: d.headers(KEY_A), body: d.body({ usage: d.usage }, stream) })
      expect(res.status).toBe(200)
    }
  }
  await eventually(() => c.usage.length === DIALECTS.length * 2)
}

describe('store operations of the ledger', () => {
  it.each<[string, Partial<GatewayOptions>]>([
    ['with pricing and no limits', {}],
    ['with limits whose function gives this owner none', { limits: { owners: () => undefined } }],
    ['with limits on a store that is not Redis (counted in this process)', { limits: { owners: { requestsPerMinute: 100 } } }],
  ])('%s: zero store operations on the happy path', async (_, options) => {
    const store = countingKeyv()
    chain = await startLedgerChain({ store: store.keyv, ...options })
    const before = store.ops()
    await callEveryDialect(chain)
    expect(store.ops() - before).toBe(0)
  })

  it('the counting store does see the operations of a call that uses it (the count can fail)', async () => {
    const store = countingKeyv()
    chain = await startLedgerChain({ store: store.keyv })
    const before = store.ops()
    const d = DIALECTS[0] as (typeof DIALECTS)[0]
    const res = await call(`${chain.url}${d.path(false)}`, {
      headers: { ...d.headers(KEY_A), 'idempotency-key': 'counted' },
      body: d.body({ usage: d.usage }, false),
    })
    expect(res.status).toBe(200)
    expect(store.ops() - before).toBeGreaterThan(0)
    expect(await chain.gateway.usage(ownerId({ apiKey: KEY_A }))).toEqual({ requests: 0, tokens: 0, cost: 0 })
  })
})
