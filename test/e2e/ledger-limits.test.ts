import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, KEY_B } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { DIALECTS, freshMinute, type LedgerChain, LIMIT_BODIES, startLedgerChain } from '../support/ledger.js'

// Per-owner limits in the memory store: checked before the upstream call, refused in the client's dialect.
const [CHAT, RESPONSES, GEMINI, CLAUDE] = DIALECTS as [
  (typeof DIALECTS)[0],
  (typeof DIALECTS)[0],
  (typeof DIALECTS)[0],
  (typeof DIALECTS)[0],
]
const OWNER_A = ownerId({ apiKey: KEY_A })
const OWNER_B = ownerId({ apiKey: KEY_B })

let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

async function start(limits: NonNullable<GatewayOptions['limits']>, extra: Partial<GatewayOptions> = {}): Promise<LedgerChain> {
  await freshMinute()
  chain = await startLedgerChain({ auth: { apiKeys: [KEY_A, KEY_B] }, limits, ...extra })
  return chain
}

function send(
  c: LedgerChain,
  d: (typeof DIALECTS)[0],
  key = KEY_A,
  mock: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return call(`${c.url}${d.path(false)}`, { headers: { ...d.headers(key), ...headers }, body: d.body({ usage: d.usage, ...mock }, false) })
}

describe('requests per minute', () => {
  for (const d of DIALECTS) {
    it(`${d.name}: the call past the limit gets 429 in its dialect, with retry-after and rate-limit headers, and goes nowhere`, async () => {
      const c = await start({ owners: { requestsPerMinute: 2 } })
      expect((await send(c, d)).status).toBe(200)
      expect((await send(c, d)).status).toBe(200)
      const refused = await send(c, d)
      expect(refused.status).toBe(429)
      expect(refused.json).toEqual(LIMIT_BODIES[d.name])
      const retryAfter = Number(refused.headers['retry-after'])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers).toMatchObject({
        'x-ratelimit-limit-requests': '2',
        'x-ratelimit-remaining-requests': '0',
        'anthropic-ratelimit-requests-limit': '2',
        'anthropic-ratelimit-requests-remaining': '0',
      })
      expect(Date.parse(refused.headers['anthropic-ratelimit-requests-reset'] as string)).toBeGreaterThan(Date.now() - 1000)
      expect(refused.headers['x-ratelimit-limit-tokens']).toBeUndefined()
      expect(c.mock.requests).toHaveLength(2)
      expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 2 })
    })
  }

  it('one counter per owner covers every dialect', async () => {
    const c = await start({ owners: { requestsPerMinute: 4 } })
    for (const d of DIALECTS) expect((await send(c, d)).status).toBe(200)
    for (const d of DIALECTS) expect((await send(c, d)).status).toBe(429)
    expect(c.mock.requests).toHaveLength(4)
  })

  it('two owners are counted apart', async () => {
    const c = await start({ owners: { requestsPerMinute: 1 } })
    expect((await send(c, CHAT, KEY_A)).status).toBe(200)
    expect((await send(c, CHAT, KEY_A)).status).toBe(429)
    expect((await send(c, CHAT, KEY_B)).status).toBe(200)
    expect((await send(c, CHAT, KEY_B)).status).toBe(429)
    expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 1 })
    expect(await c.gateway.usage(OWNER_B)).toMatchObject({ requests: 1 })
  })
})

describe('the function form', () => {
  for (const kind of ['sync', 'async'] as const) {
    it(`${kind}: each owner gets its own plan, and an owner without one is not counted`, async () => {
      const plans = new Map([[OWNER_A, { requestsPerMinute: 1 }]])
      const owners = kind === 'sync' ? (owner: string) => plans.get(owner) : async (owner: string) => plans.get(owner)
      const c = await start({ owners })
      expect((await send(c, CHAT, KEY_A)).status).toBe(200)
      expect((await send(c, GEMINI, KEY_A)).status).toBe(429)
      for (let i = 0; i < 3; i++) expect((await send(c, CHAT, KEY_B)).status).toBe(200)
      expect(await c.gateway.usage(OWNER_B)).toEqual({ requests: 0, tokens: 0, cost: 0 })
    })
  }

  it('a function that throws or answers a bad plan fails the call with 500, never with a crash', async () => {
    const c = await start({
      owners: (owner) => {
        if (owner === OWNER_A) throw new Error('plan lookup failed')
        return { requestsPerMinute: -1 }
      },
    })
    expect((await send(c, CHAT, KEY_A)).status).toBe(500)
    const bad = await send(c, CHAT, KEY_B)
    expect(bad.status).toBe(500)
    expect(c.mock.requests).toHaveLength(0)
  })

  for (const kind of ['sync', 'async'] as const) {
    it(`${kind}: a costPerDay answered without any price is told once, naming the owner digest only; calls go on`, async () => {
      const plan = { requestsPerMinute: 10, costPerDay: 0.000001 }
      const owners = kind === 'sync' ? () => plan : async () => plan
      const c = await start({ owners }, { pricing: undefined })
      for (const key of [KEY_A, KEY_A, KEY_B]) expect((await send(c, CHAT, key)).status).toBe(200)
      const told = c.warnings.filter((w) => /costPerDay/.test(w.message))
      expect(told).toEqual([
        {
          message: expect.stringMatching(/no model has a price: every call costs nothing, so it is never reached/),
          meta: { owner: OWNER_A },
        },
      ])
      expect(JSON.stringify(c.warnings)).not.toContain(KEY_A)
    })
  }

  it('a costPerDay answered with prices says nothing, and one with only unoffered prices is told', async () => {
    const priced = await start({ owners: () => ({ costPerDay: 1 }) })
    expect((await send(priced, CHAT)).status).toBe(200)
    expect(priced.warnings).toEqual([])
    await priced.close()
    chain = undefined
    const unoffered = await start({ owners: () => ({ costPerDay: 1 }) }, { pricing: { 'gpt-5': { input: 1, output: 2 } } })
    expect((await send(unoffered, CHAT)).status).toBe(200)
    expect(unoffered.warnings.filter((w) => /costPerDay/.test(w.message))).toHaveLength(1)
  })
})

describe('tokens and cost', () => {
  it('tokens per minute: checked against what calls used, charged when each ends', async () => {
    const c = await start({ owners: { tokensPerMinute: 3000 } })
    // 1801 tokens a call: the first two start under the limit; the second overshoots it by its own size.
    for (let i = 0; i < 2; i++) {
      const ok = await send(c, RESPONSES)
      expect(ok.status).toBe(200)
      await eventually(() => c.usage.some((u) => u.requestId === ok.headers['x-request-id']))
    }
    const refused = await send(c, CHAT)
    expect(refused.status).toBe(429)
    expect(refused.json.error.message).toMatch(/tokens per minute/)
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '3000', 'x-ratelimit-remaining-tokens': '0' })
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 2, tokens: 3602, cost: 900_600 })
  })

  it('cost per day: priced calls are charged, and past the budget the owner waits for the next UTC day', async () => {
    const c = await start({ owners: { costPerDay: 0.02 } })
    const first = await send(c, CLAUDE)
    expect(first.status).toBe(200)
    await eventually(() => c.usage.length === 1)
    expect((await send(c, CLAUDE)).status).toBe(200)
    await eventually(() => c.usage.length === 2)
    const refused = await send(c, GEMINI)
    expect(refused.status).toBe(429)
    expect(refused.json).toEqual(LIMIT_BODIES[GEMINI.name])
    expect(refused.json.error.message).toMatch(/cost per day/)
    const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(untilMidnight - 5)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(untilMidnight + 1)
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 2, tokens: 6000, cost: 21_912_000 })
  })

  it('a cost limit without pricing, or with prices only of models not offered, is refused at construction', async () => {
    for (const pricing of [undefined, { 'gpt-5': { input: 1, output: 2 } }]) {
      await expect(startLedgerChain({ pricing, limits: { owners: { costPerDay: 1 } } })).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringMatching(/costPerDay needs `pricing` of a model this gateway offers/),
      })
    }
  })

  it.each([
    [{ owners: { requestsPerMinute: -1 } }, /requestsPerMinute must be a whole number >= 0/],
    [{ owners: { requestsPerMinute: 1.5 } }, /requestsPerMinute must be a whole number/],
    [{ owners: { tokensPerMinute: '10' } }, /tokensPerMinute must be a whole number/],
    [{ owners: { costPerDay: Number.NaN } }, /costPerDay must be USD/],
    [{ owners: { requestPerMinute: 1 } }, /requestPerMinute is not an option; did you mean `requestsPerMinute`/],
    [{ owners: 5 }, /limits.owners must be an object/],
    [{ failClosed: 'yes' }, /limits.failClosed must be a boolean/],
  ])('refuses limits %j', async (limits, message) => {
    await expect(startLedgerChain({ limits: limits as GatewayOptions['limits'] })).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringMatching(message),
    })
  })
})

describe('what is free', () => {
  let c: LedgerChain
  beforeEach(async () => {
    c = await start({ owners: { requestsPerMinute: 1 } })
  })

  it('a replay of an Idempotency-Key and the calls that join it are never counted', async () => {
    const body = CHAT.body({ usage: CHAT.usage, delay_ms: 200 }, false)
    const headers = { ...CHAT.headers(KEY_A), 'idempotency-key': 'ledger-free' }
    const joined = await Promise.all([0, 1, 2].map(() => call(`${c.url}${CHAT.path(false)}`, { headers, body })))
    expect(joined.map((r) => r.status)).toEqual([200, 200, 200])
    const replay = await call(`${c.url}${CHAT.path(false)}`, { headers, body })
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(c.mock.requests).toHaveLength(1)
    expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 1 })
    expect((await send(c, CHAT)).status).toBe(429)
  })

  it('an SDK retry answered from the kept answer, and the recoveries endpoints, are never counted', async () => {
    const body = CHAT.body({ usage: CHAT.usage }, false)
    const first = await call(`${c.url}${CHAT.path(false)}`, { headers: { ...CHAT.headers(KEY_A), 'x-stainless-retry-count': '0' }, body })
    expect(first.status).toBe(200)
    const retry = await call(`${c.url}${CHAT.path(false)}`, { headers: { ...CHAT.headers(KEY_A), 'x-stainless-retry-count': '1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect((await call(`${c.url}/v1/recoveries`, { headers: CHAT.headers(KEY_A) })).status).toBe(200)
    expect(c.mock.requests).toHaveLength(1)
    expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 1 })
  })

  it('token counting is free upstream and never counted', async () => {
    expect((await send(c, CLAUDE)).status).toBe(200)
    for (let i = 0; i < 3; i++) {
      const counted = await call(`${c.url}/v1/messages/count_tokens`, {
        headers: CLAUDE.headers(KEY_A),
        body: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count me' }] },
      })
      expect(counted.status).toBe(200)
      const gemini = await call(`${c.url}/v1beta/models/gemini-2.5-flash:countTokens`, {
        headers: GEMINI.headers(KEY_A),
        body: { contents: [{ role: 'user', parts: [{ text: 'count me' }] }] },
      })
      expect(gemini.status).toBe(200)
    }
    expect(await c.gateway.usage(OWNER_A)).toMatchObject({ requests: 1 })
  })
})

describe('gateway.usage', () => {
  it('answers zeros without limits, and refuses an owner that is not a string', async () => {
    const c = await start({})
    expect((await send(c, CHAT)).status).toBe(200)
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 0, tokens: 0, cost: 0 })
    await expect(c.gateway.usage(undefined as unknown as string)).rejects.toMatchObject({ code: 'invalid_request' })
  })
})
