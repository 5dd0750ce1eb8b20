// The response cache's options, resolved once at construction.
import { fail, knownKeys } from '../config/checks.js'
import { isObject } from '../json/value.js'
import type { CacheableCall } from './types.js'

/** `cache` after defaults. */
export interface ResolvedCacheOptions {
  models: (call: CacheableCall) => boolean
  ttlMs: number
  maxBytes: number
  scope: 'owner' | 'shared'
  storeLengthStops: boolean
}

/** Defaults of the cache's numbers (the options reference states the same). */
export const CACHE_DEFAULTS = { ttlMs: 5 * 60_000, maxBytes: 64 * 1024 * 1024 } as const

/** The keys `cache` may hold. */
export const CACHE_KEYS = ['models', 'ttlMs', 'maxBytes', 'scope', 'storeLengthStops'] as const

const EVERY_MODEL = () => true

function positive(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
    fail(`${name} must be a positive integer, got ${String(value)}`)
  return value
}

/** Checks `cache` and applies its defaults; undefined when the cache is off (absent). */
export function resolveCache(raw: unknown, modelIds: ReadonlySet<string>): ResolvedCacheOptions | undefined {
  if (raw === undefined) return undefined
  if (!isObject(raw)) fail('cache must be an object')
  knownKeys(raw, CACHE_KEYS, 'cache.')
  if (raw.scope !== undefined && raw.scope !== 'owner' && raw.scope !== 'shared') fail("cache.scope must be 'owner' or 'shared'")
  if (raw.storeLengthStops !== undefined && typeof raw.storeLengthStops !== 'boolean') fail('cache.storeLengthStops must be a boolean')
  return {
    models: resolveModels(raw.models, modelIds),
    ttlMs: positive(raw.ttlMs, CACHE_DEFAULTS.ttlMs, 'cache.ttlMs'),
    maxBytes: positive(raw.maxBytes, CACHE_DEFAULTS.maxBytes, 'cache.maxBytes'),
    scope: (raw.scope as 'owner' | 'shared' | undefined) ?? 'owner',
    storeLengthStops: raw.storeLengthStops === true,
  }
}

function resolveModels(models: unknown, modelIds: ReadonlySet<string>): (call: CacheableCall) => boolean {
  if (models === undefined) return EVERY_MODEL
  if (typeof models === 'function') return models as (call: CacheableCall) => boolean
  if (!Array.isArray(models)) fail('cache.models must be a list of model ids or a function')
  for (const id of models) {
    // A typo would cache nothing, in silence: the one complaint peers' users repeat most.
    if (typeof id !== 'string' || !modelIds.has(id)) fail(`cache.models names '${String(id)}', which is not a configured model id`)
  }
  const ids = new Set(models as string[])
  return (call) => ids.has(call.model)
}
