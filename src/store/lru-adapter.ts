import { EventEmitter } from 'node:events'
import Keyv, { type KeyvStoreAdapter } from 'keyv'
import { LRUCache } from 'lru-cache'

/** Namespace of the default in-memory Keyv. */
export const MEMORY_NAMESPACE = 'model-gateway'

/** Default byte bound of the in-memory store: 256 MiB. */
export const DEFAULT_MAX_MEMORY_BYTES = 256 * 1024 * 1024

/**
 * Upper bound of the heap bytes a stored value holds, in O(1) per string: V8 keeps one or two bytes
 * per UTF-16 unit, so `length * 2` never undercounts. Exact `Buffer.byteLength` costs 12 ms (ASCII)
 * to 31 ms (CJK) on a 20 MB string (Node 20), too slow for a size callback on the write path.
 */
export function approxBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return 16 + value.length * 2
  if (typeof value !== 'object' || value === null) return 16
  if (depth > 4) return 64
  let total = 64
  if (Array.isArray(value)) {
    for (const item of value) total += approxBytes(item, depth + 1)
  } else {
    for (const [key, item] of Object.entries(value)) total += 16 + key.length * 2 + approxBytes(item, depth + 1)
  }
  return total
}

type Stored = NonNullable<unknown>

/**
 * A Keyv store adapter over lru-cache, bounded in bytes.
 *
 * - Keyv calls `store.set(key, value, ttlMs)`; lru-cache >= 11.3 wants `{ ttl }` and throws on a number
 *   (so Keyv's `set` returns false and the write is lost). This adapter translates.
 * - `set` resolves false when lru-cache refused the value (above `maxEntrySize`), so Keyv's `set` does too.
 * - Reads use `peek`: reading never changes the eviction order, which stays the order of writes. The
 *   gateway store writes a record's detail, then its bodies, so a record's detail is evicted before its bodies
 *   (the catalog, held beside the cache, is told of every evicted detail through `onEvict`, and a surviving
 *   detail means its bodies survived too).
 * - `clear()` only removes keys of its own namespace.
 */
export class LruStoreAdapter extends EventEmitter implements KeyvStoreAdapter {
  readonly opts = { dialect: 'lru-cache' }
  namespace: string | undefined
  readonly cache: LRUCache<string, Stored>

  /** Called with the key of every value pushed out to make room (not for deletes or replacements). */
  onEvict: ((key: string) => void) | undefined
  /** Called with the key of every value found expired and purged. */
  onExpire: ((key: string) => void) | undefined

  constructor(options: { maxSize: number; maxEntrySize?: number }) {
    super()
    const maxSize = Math.max(1, Math.floor(options.maxSize))
    this.cache = new LRUCache<string, Stored>({
      dispose: (_value, key, reason) => {
        if (reason === 'evict') this.onEvict?.(key)
        else if (reason === 'expire') this.onExpire?.(key)
      },
      maxSize,
      maxEntrySize: Math.min(maxSize, Math.max(1, Math.floor(options.maxEntrySize ?? maxSize / 2))),
      sizeCalculation: (value, key) => Math.max(1, approxBytes(value) + key.length * 2),
      ttlAutopurge: false,
      allowStale: false,
    })
  }

  async get<Value>(key: string): Promise<Value | undefined> {
    const value = this.cache.peek(key)
    // A stale entry is invisible to peek but still holds memory: drop it now.
    if (value === undefined) this.cache.delete(key)
    return value as Value | undefined
  }

  async getMany<Value>(keys: string[]): Promise<Array<Value | undefined>> {
    return Promise.all(keys.map((key) => this.get<Value>(key)))
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    if (value === undefined || value === null) return false
    const status: LRUCache.Status<string, Stored> = {}
    const ttlMs = typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? Math.ceil(ttl) : undefined
    this.cache.set(key, value, ttlMs === undefined ? { status } : { ttl: ttlMs, status })
    return !status.maxEntrySizeExceeded
  }

  async delete(key: string): Promise<boolean> {
    return this.cache.delete(key)
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    let deleted = false
    for (const key of keys) deleted = this.cache.delete(key) || deleted
    return deleted
  }

  async has(key: string): Promise<boolean> {
    return this.cache.has(key)
  }

  async hasMany(keys: string[]): Promise<boolean[]> {
    return keys.map((key) => this.cache.has(key))
  }

  async clear(): Promise<void> {
    if (!this.namespace) {
      this.cache.clear()
      return
    }
    const prefix = `${this.namespace}:`
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.cache.delete(key)
  }

  async disconnect(): Promise<void> {
    this.cache.clear()
  }
}

/**
 * The default store: Keyv over the LRU adapter, without serialisation. Values stay JS objects and
 * strings, so a 20 MB body is never JSON-escaped; Keyv still wraps each as `{ value, expires }`.
 */
export function createMemoryKeyv(maxMemoryBytes = DEFAULT_MAX_MEMORY_BYTES): { keyv: Keyv; adapter: LruStoreAdapter } {
  const adapter = new LruStoreAdapter({ maxSize: maxMemoryBytes })
  const keyv = new Keyv({ store: adapter, namespace: MEMORY_NAMESPACE, serialize: undefined, deserialize: undefined })
  return { keyv, adapter }
}
