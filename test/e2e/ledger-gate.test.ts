import { afterEach, describe, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, KEY_B } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, LIMIT_BODIES, startLedgerChain } from '../support/ledger.js'

// Every call that goes upstream passes one gate: background responses are limited, bounded and charged as any call.
const RESPONSES = DIALECTS.find((d) => d.name === 'OpenAI Responses') as (typeof DIALECTS)[0]
const OWNER_A = ownerId({ apiKey: KEY_A })

let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

async function start(overrides: Partial<GatewayOptions>): Promise<LedgerChain> {
  await freshMinute()
  chain = await startLedgerChain({ auth: { apiKeys: [KEY_A, KEY_B] }, ...overrides })
  return chain
}

/** A background create of the Responses dialect, the mock steered by `mock`. */
function create(c: LedgerChain, mock: Record<string, unknown> = {}, key = KEY_A) {
  return call(`${c.url}/v1/responses`, {
    headers: RESPONSES.headers(key),
    body: { ...RESPONSES.body({ usage: RESPONSES.usage, ...mock }, false), background: true },
  })
}

/** Waits for the background response `id` to reach a final state. */
async function ended(c: LedgerChain, id: string, key = KEY_A): Promise<Record<string, any>> {
  return eventually(async () => {
    const got = await call(`${c.url}/v1/responses/${id}`, { method: 'GET', headers: RESPONSES.headers(key) })
    return ['completed', 'failed', 'cancelled', 'incomplete'].includes(got.json.status) ? got.json : undefined
  })
}

describe('background responses pass the ledger', () => {
  it('requestsPerMinute: the create past the limit gets 429 in its dialect and goes nowhere; those let through are counted', async () => {
    const c = await start({ limits: { owners: { requestsPerMinute: 3 } } })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const created = await create(c)
      expect(created.status).toBe(200)
      ids.push(created.json.id)
    }
    const refused = await create(c)
    expect(refused.status).toBe(429)
    expect(refused.json).toEqual(LIMIT_BODIES['OpenAI Responses'])
    for (const id of ids) expect((await ended(c, id)).status).toBe('completed')
    expect(c.mock.requests).toHaveLength(3)
    // A plain call is refused too: one counter covers both.
    const plain = await call(`${c.url}/v1/responses`, { headers: RESPONSES.headers(KEY_A), body: RESPONSES.body({}, false) })
    expect(plain.status).toBe(429)
    expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 3 })
  })

  it('tokens and cost: each background call is charged once, and its usage event carries its cost', async () => {
    const c = await start({ limits: { owners: { tokensPerMinute: 3000 } } })
    for (let i = 0; i < 2; i++) {
      const created = await create(c)
      expect(created.status).toBe(200)
      await ended(c, created.json.id)
      await eventually(() => c.usage.length === i + 1)
    }
    expect(c.usage).toEqual([
      expect.objectContaining({ ...RESPONSES.counts, cost: RESPONSES.cost, complete: true }),
      expect.objectContaining({ ...RESPONSES.counts, cost: RESPONSES.cost, complete: true }),
    ])
    await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 2 * 1801)
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 2, tokens: 3602, cost: 2 * RESPONSES.cost })
    // Past the token limit now: the next create is refused at once.
    const refused = await create(c)
    expect(refused.status).toBe(429)
    expect(refused.json.error.message).toMatch(/tokens per minute/)
    expect(c.mock.requests).toHaveLength(2)
  })
})

describe('background responses running at once', () => {
  it('background.maxRunningPerOwner: a create past it is 429 at once, another owner is not held back, and a place frees once a call ends', async () => {
    const c = await start({ background: { maxRunningPerOwner: 2 } })
    const slow = { delay_ms: 60_000 }
    const first = await create(c, slow)
    const second = await create(c, slow)
    expect([first.status, second.status]).toEqual([200, 200])
    const refused = await create(c, slow)
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json.error).toMatchObject({
      code: 'rate_limit_exceeded',
      message: expect.stringMatching(/background\.maxRunningPerOwner: 2/),
    })
    // Nothing of the refused create was kept or sent.
    expect(c.mock.requests.length).toBeLessThanOrEqual(2)
    expect((await create(c, {}, KEY_B)).status).toBe(200)
    const cancelled = await call(`${c.url}/v1/responses/${first.json.id}/cancel`, { headers: RESPONSES.headers(KEY_A), body: {} })
    expect(cancelled.json.status).toBe('cancelled')
    await ended(c, first.json.id)
    await eventually(async () => (await create(c)).status === 200)
    await call(`${c.url}/v1/responses/${second.json.id}/cancel`, { headers: RESPONSES.headers(KEY_A), body: {} })
  })

  it('background.maxRunning bounds every owner together', async () => {
    const c = await start({ background: { maxRunning: 1 } })
    const first = await create(c, { delay_ms: 60_000 })
    expect(first.status).toBe(200)
    const refused = await create(c, {}, KEY_B)
    expect(refused.status).toBe(429)
    expect(refused.json.error.message).toMatch(/background\.maxRunning: 1/)
    await call(`${c.url}/v1/responses/${first.json.id}/cancel`, { headers: RESPONSES.headers(KEY_A), body: {} })
    await ended(c, first.json.id)
  })

  it('a burst of creates by one owner is bounded: those past the bound are refused, never run', async () => {
    const c = await start({ background: { maxRunningPerOwner: 4 } })
    const answers = await Promise.all(Array.from({ length: 40 }, () => create(c, { delay_ms: 60_000 })))
    const accepted = answers.filter((a) => a.status === 200)
    expect(accepted).toHaveLength(4)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(36)
    for (const a of accepted) await call(`${c.url}/v1/responses/${a.json.id}/cancel`, { headers: RESPONSES.headers(KEY_A), body: {} })
    for (const a of accepted) await ended(c, a.json.id)
    expect(c.mock.requests.length).toBeLessThanOrEqual(4)
  })
})
