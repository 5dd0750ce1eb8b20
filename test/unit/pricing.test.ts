import { describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { costOf, nanoDollars, resolvePricing } from '../../src/ledger/pricing.js'
import type { GatewayOptions, TokenCounts } from '../../src/types.js'

const counts = (fields: Partial<TokenCounts>): TokenCounts => {
  const input = fields.input_tokens ?? 0
  const output = fields.output_tokens ?? 0
  return {
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    ...fields,
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
  }
}
const ids = new Set(['m'])
const priced = (price: Record<string, unknown>) => {
  const prices = resolvePricing({ m: price }, ids)?.prices.get('m')
  if (!prices) throw new Error('no prices')
  return prices
}

describe('prices in nano-dollars', () => {
  it('reads a price from its decimal digits, never from the nearest double', () => {
    expect(nanoDollars(0.15)).toBe(150_000_000n)
    expect(nanoDollars(0.1 + 0.2)).toBe(300_000_000n)
    expect(nanoDollars(1e-9)).toBe(1n)
    expect(nanoDollars(2.5)).toBe(2_500_000_000n)
    expect(nanoDollars(0)).toBe(0n)
  })

  it('adds the parts exactly and rounds once, half up', () => {
    // Ten thousand calls at 0.1 and 0.2 $/M: a float sum would drift; an integer one does not.
    const prices = priced({ input: 0.1, output: 0.2 })
    let total = 0
    for (let i = 0; i < 10_000; i++) total += costOf(prices, counts({ input_tokens: 3, output_tokens: 3 }))
    expect(total).toBe(9_000_000)
    // 1 n$ per million tokens: half a million tokens is half a nano-dollar, rounded up once.
    const tiny = priced({ input: 1e-9, output: 0 })
    expect(costOf(tiny, counts({ input_tokens: 499_999 }))).toBe(0)
    expect(costOf(tiny, counts({ input_tokens: 500_000 }))).toBe(1)
  })

  it('bills cached, cache-write and reasoning tokens at their own prices, else at input and output', () => {
    const usage = counts({
      input_tokens: 1000,
      cached_input_tokens: 300,
      cache_write_tokens: 200,
      output_tokens: 100,
      reasoning_tokens: 40,
    })
    expect(costOf(priced({ input: 1, output: 2 }), usage)).toBe(1000 * 1000 + 100 * 2000)
    const apart = priced({ input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 2, reasoning: 3 })
    expect(costOf(apart, usage)).toBe(500 * 1000 + 300 * 100 + 200 * 1250 + 60 * 2000 + 40 * 3000)
  })

  it('prices a call as numbers exactly as in BigInt, up to the largest counts and prices taken', () => {
    // The sum as BigInt, rounded once: what the number path must give wherever it is taken.
    const exact = (p: { input: number; output: number }, input: number, output: number) =>
      Number((BigInt(input) * nanoDollars(p.input) + BigInt(output) * nanoDollars(p.output) + 500_000n) / 1_000_000n)
    const cases: Array<[{ input: number; output: number }, number, number]> = [
      [{ input: 0.15, output: 0.6 }, 12_345, 678],
      [{ input: 3, output: 15 }, 100_000_000, 100_000_000],
      [{ input: 1_000_000, output: 1_000_000 }, 100_000_000, 100_000_000],
      [{ input: 1_000_000, output: 999_999.999999999 }, 4_503_599, 4_503_598],
      [{ input: 0.000000001, output: 0.000000003 }, 1_499_999, 1],
    ]
    for (const [p, input, output] of cases) {
      expect(costOf(priced(p), counts({ input_tokens: input, output_tokens: output }))).toBe(exact(p, input, output))
    }
  })

  it('costs nothing for no tokens', () => {
    expect(costOf(priced({ input: 5, output: 15 }), counts({}))).toBe(0)
  })
})

describe('pricing option', () => {
  const base: GatewayOptions = {
    upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' } },
    models: [{ id: 'gpt-4o-mini', upstream: 'u' }],
    auth: { apiKeys: ['a'] },
  }
  const build = (pricing: unknown) => () => createGateway({ ...base, pricing: pricing as GatewayOptions['pricing'] })

  it.each([
    [{ 'gpt-4o-mini': { input: -1, output: 1 } }, /pricing\['gpt-4o-mini'\]\.input must be between 0/],
    [{ 'gpt-4o-mini': { input: Number.NaN, output: 1 } }, /pricing\['gpt-4o-mini'\]\.input must be a number/],
    [{ 'gpt-4o-mini': { input: 1, output: Number.POSITIVE_INFINITY } }, /\.output must be between 0/],
    [{ 'gpt-4o-mini': { input: '1', output: 1 } }, /\.input must be a number/],
    [{ 'gpt-4o-mini': { input: 1, output: 1, cached: 0.5 } }, /cached is not an option; did you mean `cachedInput`/],
    [{ 'gpt-4o-mini': { input: 1 } }, /needs both input and output/],
    [{ 'gpt-4o': { input: 1, output: -1 } }, /pricing\['gpt-4o'\]\.output must be between 0/],
    [{ 'gpt-4o-mini': 3 }, /must be an object/],
    [[], /pricing must be an object/],
  ])('refuses %j', (pricing, message) => {
    expect(build(pricing)).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(message) }))
  })

  it('takes prices of models it offers', () => {
    expect(build({ 'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6, reasoning: 0.6, cacheWrite: 0.2 } })).not.toThrow()
  })
})

describe('prices of models the gateway does not offer', () => {
  const base: GatewayOptions = {
    upstreams: { u: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' } },
    models: [
      { id: 'gpt-4o-mini', upstream: 'u' },
      { id: 'claude-haiku-4-5', upstream: 'u' },
    ],
    auth: { apiKeys: ['a'] },
  }
  const build = (pricing: GatewayOptions['pricing']) => {
    const lines: Array<{ message: string; meta?: Record<string, unknown> }> = []
    const gateway = createGateway({ ...base, pricing, logger: { warn: (message, meta) => lines.push({ message, meta }), error() {} } })
    return { gateway, lines }
  }

  it('are taken, and named in one warn line at construction, with the offered id a near miss was meant for', async () => {
    const { gateway, lines } = build({
      'gpt-4o-mini': { input: 0.15, output: 0.6 },
      'gpt-4o-mimi': { input: 0.15, output: 0.6 },
      'claude-haiku-4.5': { input: 1, output: 5 },
      'gemini-2.5-pro': { input: 1.25, output: 10 },
    })
    expect(lines).toEqual([
      {
        message: 'model-gateway: pricing names models this gateway does not offer; their prices are unused',
        meta: {
          models: ['gpt-4o-mimi', 'claude-haiku-4.5', 'gemini-2.5-pro'],
          didYouMean: { 'gpt-4o-mimi': 'gpt-4o-mini', 'claude-haiku-4.5': 'claude-haiku-4-5' },
        },
      },
    ])
    await gateway.close()
  })

  it('says nothing when every priced id is offered', async () => {
    const { gateway, lines } = build({ 'gpt-4o-mini': { input: 0.15, output: 0.6 } })
    expect(lines).toEqual([])
    await gateway.close()
  })
})
