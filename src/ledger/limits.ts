// `limits.owners` checked and turned into the counters' units.
import { fail, knownKeys } from '../config/checks.js'
import { GatewayError } from '../errors.js'
import { isObject } from '../json/value.js'
import type { LimitOptions, OwnerLimits } from '../types.js'
import type { CounterLimits } from './counters.js'
import { nanoDollars } from './pricing.js'

const LIMIT_KEYS = ['requestsPerMinute', 'tokensPerMinute', 'costPerDay'] as const

/** `limits.owners` resolved: one set for everyone, or the host's function (its answers checked per call). */
export type ResolvedOwnerLimits = { fixed: CounterLimits } | { of: NonNullable<LimitOptions['owners']> & ((owner: string) => unknown) }

/** One owner's limits in the counters' units; throws `problem(message)` for a bad value. */
export function counterLimits(raw: unknown, where: string, problem: (message: string) => never): CounterLimits {
  if (!isObject(raw)) problem(`${where} must be an object { requestsPerMinute?, tokensPerMinute?, costPerDay? }`)
  for (const key of Object.keys(raw)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(key)) problem(`${where}.${key} is not a limit (known: ${LIMIT_KEYS.join(', ')})`)
  }
  const count = (key: 'requestsPerMinute' | 'tokensPerMinute') => {
    const value = raw[key]
    if (value === undefined) return -1
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      problem(`${where}.${key} must be a whole number >= 0, got ${String(value)}`)
    }
    return value
  }
  let cost = -1
  if (raw.costPerDay !== undefined) {
    const usd = raw.costPerDay
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0 || usd > 1e6) {
      problem(`${where}.costPerDay must be USD between 0 and 1000000, got ${String(usd)}`)
    }
    cost = Number(nanoDollars(usd))
  }
  return { requests: count('requestsPerMinute'), tokens: count('tokensPerMinute'), cost }
}

/** Checks `limits.owners`; undefined when it is not set. `hasPricing` says whether a cost limit can ever be reached. */
export function resolveOwnerLimits(raw: unknown, hasPricing: boolean): ResolvedOwnerLimits | undefined {
  if (raw === undefined) return undefined
  if (typeof raw === 'function') return { of: raw as (owner: string) => unknown }
  if (!isObject(raw))
    fail('limits.owners must be an object { requestsPerMinute?, tokensPerMinute?, costPerDay? } or a function of the owner')
  knownKeys(raw, LIMIT_KEYS, 'limits.owners.')
  const fixed = counterLimits(raw, 'limits.owners', fail)
  if (fixed.cost >= 0 && !hasPricing)
    fail('limits.owners.costPerDay needs `pricing` of a model this gateway offers: without prices every call costs nothing')
  return { fixed }
}

/** The limits a host's function gave one owner; undefined: none. A bad answer is the host's bug, answered 500. */
export function answeredLimits(answer: unknown): CounterLimits | undefined {
  if (answer === undefined || answer === null) return undefined
  return counterLimits(answer as OwnerLimits, 'limits.owners(owner)', (message) => {
    throw new GatewayError('internal_error', `${message} (limits.owners returned a bad value)`)
  })
}
