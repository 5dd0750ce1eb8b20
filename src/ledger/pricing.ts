// Prices and the cost of a call, in integer nano-dollars. A price in USD per million tokens is turned into integer
// nano-dollars per million tokens once, from its decimal digits, so no float error enters; a call's cost is the
// exact sum of tokens × price, divided by a million and rounded once (half up).
import { fail, knownKeys } from '../config/checks.js'
import { nearestName } from '../config/suggest.js'
import { isObject } from '../json/value.js'
import type { TokenCounts } from '../types.js'
import type { ModelPrice } from './types.js'

/** A model's prices in nano-dollars per million tokens, each kind resolved to the price it is billed at. */
export interface NanoPrices {
  input: bigint
  cachedInput: bigint
  cacheWrite: bigint
  output: bigint
  reasoning: bigint
  /** The same prices as numbers (input, cachedInput, cacheWrite, output, reasoning), for the exact fast path of `costOf`. */
  numbers: readonly [number, number, number, number, number]
}

const PRICE_KEYS = ['input', 'cachedInput', 'cacheWrite', 'output', 'reasoning'] as const
/** The largest price taken, in USD per million tokens: far above any model's, and exact to the nano-dollar. */
const MAX_PRICE = 1_000_000
const MILLION = 1_000_000n
const HALF_MILLION = 500_000n

/** USD (a finite number ≥ 0, at most 9 decimals kept) as integer nano-dollars, from its decimal digits. */
export function nanoDollars(usd: number): bigint {
  // toFixed(9) is the decimal nearest the double: 0.15 is "0.150000000", not 0.1499999999999999944…
  const [whole, fraction = ''] = usd.toFixed(9).split('.')
  return BigInt(whole as string) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'))
}

function price(value: unknown, where: string): bigint {
  if (typeof value !== 'number' || Number.isNaN(value)) fail(`${where} must be a number (USD per million tokens)`)
  if (!Number.isFinite(value) || value < 0 || value > MAX_PRICE) {
    fail(`${where} must be between 0 and ${MAX_PRICE} (USD per million tokens), got ${value}`)
  }
  return nanoDollars(value)
}

/** `pricing` resolved: the prices of the models offered, and the ids priced that no model has. */
export interface ResolvedPricing {
  prices: Map<string, NanoPrices>
  /** Ids priced that no model of this gateway has (one price table may serve many gateways), each checked all the same. */
  unoffered: string[]
}

/**
 * Checks `pricing` and resolves it per model id; throws GatewayError('invalid_options'). An id no model has is taken
 * (a price table is often shared by gateways that offer different models) and named in `unoffered`.
 */
export function resolvePricing(raw: unknown, modelIds: ReadonlySet<string>): ResolvedPricing | undefined {
  if (raw === undefined) return undefined
  if (!isObject(raw)) fail('pricing must be an object of model id → { input, output, cachedInput?, cacheWrite?, reasoning? }')
  const prices = new Map<string, NanoPrices>()
  const unoffered: string[] = []
  for (const [model, entry] of Object.entries(raw)) {
    const where = `pricing['${model}']`
    if (!isObject(entry)) fail(`${where} must be an object { input, output, cachedInput?, cacheWrite?, reasoning? }`)
    knownKeys(entry, PRICE_KEYS, `${where}.`)
    if (entry.input === undefined || entry.output === undefined) fail(`${where} needs both input and output prices`)
    const input = price(entry.input, `${where}.input`)
    const output = price(entry.output, `${where}.output`)
    const optional = (key: keyof ModelPrice, fallback: bigint) =>
      entry[key] === undefined ? fallback : price(entry[key], `${where}.${key}`)
    if (!modelIds.has(model)) {
      unoffered.push(model)
      continue
    }
    const cachedInput = optional('cachedInput', input)
    const cacheWrite = optional('cacheWrite', input)
    const reasoning = optional('reasoning', output)
    const numbers = [input, cachedInput, cacheWrite, output, reasoning].map(Number) as unknown as NanoPrices['numbers']
    prices.set(model, { input, cachedInput, cacheWrite, output, reasoning, numbers })
  }
  return { prices, unoffered }
}

/**
 * The warn line's fields for priced ids no model has: each id, with the offered id it is likely a misspelling of.
 * Undefined when there is none.
 */
export function unofferedPrices(unoffered: readonly string[], modelIds: Iterable<string>): Record<string, unknown> | undefined {
  if (unoffered.length === 0) return undefined
  const offered = [...modelIds]
  const nearMisses: Record<string, string> = {}
  for (const id of unoffered) {
    const near = nearestName(id, offered)
    if (near !== undefined) nearMisses[id] = near
  }
  return { models: unoffered, ...(Object.keys(nearMisses).length > 0 ? { didYouMean: nearMisses } : {}) }
}

/**
 * The cost of a call's tokens in nano-dollars: cached and cache-write tokens at their prices, the rest of the input at
 * `input`; reasoning tokens at `reasoning`, the rest of the output at `output`.
 */
export function costOf(prices: NanoPrices, usage: TokenCounts): number {
  // Whole numbers below 2^53 add and multiply exactly as doubles: a usual call is priced without a BigInt.
  const [input, cachedInput, cacheWrite, output, reasoningPrice] = prices.numbers
  const exact =
    Math.max(0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens) * input +
    usage.cached_input_tokens * cachedInput +
    usage.cache_write_tokens * cacheWrite +
    Math.max(0, usage.output_tokens - usage.reasoning_tokens) * output +
    usage.reasoning_tokens * reasoningPrice
  // Every term is at most the sum, so a whole sum within the safe range had every product and partial sum exact.
  const rounded = exact + 500_000
  if (Number.isSafeInteger(rounded)) return (rounded - (rounded % 1_000_000)) / 1_000_000
  const cached = BigInt(usage.cached_input_tokens)
  const written = BigInt(usage.cache_write_tokens)
  const reasoning = BigInt(usage.reasoning_tokens)
  const plainInput = BigInt(Math.max(0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens))
  const plainOutput = BigInt(Math.max(0, usage.output_tokens - usage.reasoning_tokens))
  const perMillion =
    plainInput * prices.input +
    cached * prices.cachedInput +
    written * prices.cacheWrite +
    plainOutput * prices.output +
    reasoning * prices.reasoning
  return Number((perMillion + HALF_MILLION) / MILLION)
}
