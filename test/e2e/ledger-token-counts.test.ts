import { afterEach, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'
import { describeWithRedis, recommendedKeyv } from '../support/redis.js'

// Token counts an upstream reports are taken whole and bounded: a bad figure is clamped (and told once), never a
// crash in pricing, a lost charge, or a lock-out; the counters in memory and on Redis add the same integers.
const OWNER_A = ownerId({ apiKey: KEY_A })
const CHAT = DIALECTS[0] as (typeof DIALECTS)[0]
const RUN = `ledger-counts-${process.pid}-${Date.now()}`

let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

const STORES: Array<[string, (n: number) => GatewayOptions['store']]> = [
  ['memory', () => undefined],
  ['Redis', (n) => recommendedKeyv(`${RUN}-${n}`)],
]
let made = 0

async function start(store: (n: number) => GatewayOptions['store'], limits: NonNullable<GatewayOptions['limits']>) {
  await freshMinute()
  chain = await startLedgerChain({ store: store(made++), limits })
  return chain
}

function send(c: LedgerChain, usage: Record<string, unknown>) {
  return call(`${c.url}/v1/chat/completions`, { headers: CHAT.headers(KEY_A), body: CHAT.body({ usage }, false) })
}

await describeWithRedis('token counts an upstream reports', () => {
  for (const [name, store] of STORES) {
    it(`${name}: a fractional count is rounded up, reported, priced and charged, so the token limit holds`, async () => {
      const c = await start(store, { owners: { tokensPerMinute: 100 } })
      const first = await send(c, { prompt_tokens: 10.5, completion_tokens: 200, total_tokens: 210.5 })
      expect(first.status).toBe(200)
      const event = await eventually(() => c.usage[0])
      // 11 × 0.15 + 200 × 0.6 µ$ = 121.65 µ$
      expect(event).toMatchObject({ input_tokens: 11, output_tokens: 200, total_tokens: 211, cost: 121_650 })
      await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 211)
      const refused = await send(c, { prompt_tokens: 10.5, completion_tokens: 200, total_tokens: 210.5 })
      expect(refused.status).toBe(429)
      expect(c.mock.requests).toHaveLength(1)
      const told = c.warnings.filter((w) => /token counts/.test(w.message))
      expect(told).toEqual([
        {
          message: expect.stringMatching(/clamped/),
          meta: expect.objectContaining({ model: 'gpt-4o-mini', bound: 100_000_000 }),
        },
      ])
    })

    it(`${name}: a count past 10^8 is capped at it; tokens and cost are both charged, and told once a minute`, async () => {
      const c = await start(store, { owners: { tokensPerMinute: 1_000_000_000 } })
      for (const usage of [
        { prompt_tokens: 1e300, completion_tokens: 1, total_tokens: 1e300 },
        { prompt_tokens: 2 ** 60, completion_tokens: 2 ** 60, total_tokens: 2 ** 61 },
      ]) {
        expect((await send(c, usage)).status).toBe(200)
      }
      await eventually(() => c.usage.length === 2)
      expect(c.usage[0]).toMatchObject({ input_tokens: 100_000_000, output_tokens: 1, total_tokens: 100_000_001 })
      expect(c.usage[1]).toMatchObject({ input_tokens: 100_000_000, output_tokens: 100_000_000, total_tokens: 200_000_000 })
      // 10^8 × 0.15 + 0.6 µ$, then 10^8 × (0.15 + 0.6) µ$, in nano-dollars.
      const cost = 15_000_000_600 + 75_000_000_000
      expect(c.usage.map((u) => u.cost)).toEqual([15_000_000_600, 75_000_000_000])
      await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 300_000_001)
      expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 2, tokens: 300_000_001, cost })
      expect(c.warnings.filter((w) => /token counts/.test(w.message))).toHaveLength(1)
      expect(c.warnings.filter((w) => /store failed/.test(w.message))).toEqual([])
    })
  }
})
