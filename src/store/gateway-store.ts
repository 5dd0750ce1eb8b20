import type Keyv from 'keyv'
import { invariant } from '../errors.js'
import type { RecoveryRecord, RecoverySummary } from '../types.js'
import type { OwnerCatalog } from './catalog.js'
import { guarded, guardedSteps, storeClosed, storeUnavailable } from './guard.js'
import { type KeyedValues, KeyvValues, RedisValues } from './keyed-values.js'
import { KeyvCatalog } from './keyv-catalog.js'
import {
  assertKeyParts,
  deleteRecordKeys,
  joinRecord,
  newestFirst,
  type RecordKeys,
  recordKeys,
  splitRecord,
  toCatalogEntry,
  toSummary,
  valueKey,
} from './layout.js'
import { approxBytes, createMemoryKeyv, type LruStoreAdapter } from './lru-adapter.js'
import { MemoryCatalog, type OwnerLimits } from './memory-catalog.js'
import { RedisCatalog } from './redis-catalog.js'
import { isRedisKeyv } from './redis-link.js'
import type { GatewayStore, GatewayStoreOptions } from './store-api.js'

export type { GatewayStore, GatewayStoreOptions }

const DEFAULT_TIMEOUT_MS = 5000
const DEFAULT_OWNER_LIMITS: OwnerLimits = { maxRecords: 10_000, maxBytes: 128 * 1024 * 1024 }
/** A record's detail key as the memory store holds it (behind Keyv's namespace): owner and request id. */
const DETAIL_KEY = /rec:\{([0-9a-f]+)\}:([0-9A-HJKMNP-TV-Z]{26})$/
/** An owner's value key as the memory store holds it: owner, and the key as the catalog counts it. */
const VALUE_KEY = /(?:^|:)(val:\{([0-9a-f]+)\}:.+)$/
/** Longest a health check waits for the store: a health endpoint must answer fast even when the store does not. */
const HEALTH_TIMEOUT_MS = 1000
/** A key nobody writes, read by the health check of a Keyv that can only be asked through a read. */
const HEALTH_KEY = 'health'
/** How long a call waits for a Redis connection still being opened (a lost one fails at once). */
const MAX_CONNECT_WAIT_MS = 2000

/** Creates the gateway's store over the given Keyv, or over a private byte-bounded in-memory one. */
export function createGatewayStore(options: GatewayStoreOptions = {}): GatewayStore {
  return new KeyvGatewayStore(options)
}

class KeyvGatewayStore implements GatewayStore {
  readonly #keyv: Keyv
  readonly #owned: LruStoreAdapter | undefined
  readonly #catalog: OwnerCatalog
  readonly #values: KeyedValues
  /** The default in-memory store's catalog, which counts values too; undefined with a Keyv passed in. */
  #memory: MemoryCatalog | undefined
  readonly #timeoutMs: number
  readonly #onError: (error: unknown) => void
  #closed = false

  get shared(): boolean {
    return this.#owned === undefined
  }

  constructor(options: GatewayStoreOptions) {
    const report = options.onError
    this.#onError = (error) => {
      try {
        report?.(error)
      } catch {
        // A failing logger must not break the store.
      }
    }
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const limits = options.ownerLimits ?? DEFAULT_OWNER_LIMITS
    const onEvict = options.onEvict ?? (() => {})
    if (options.keyv) {
      this.#keyv = options.keyv
      this.#owned = undefined
      if (isRedisKeyv(this.#keyv)) {
        const redis = new RedisCatalog(this.#keyv, {
          waitMs: Math.min(MAX_CONNECT_WAIT_MS, this.#timeoutMs),
          onError: this.#onError,
          maxRecords: limits.maxRecords,
          onEvict,
          onTrim: options.onTrim ?? (() => {}),
        })
        this.#catalog = redis
        this.#values = new RedisValues(redis.link)
      } else {
        this.#catalog = new KeyvCatalog(this.#keyv, { maxRecords: limits.maxRecords, onEvict })
        this.#values = new KeyvValues(this.#keyv)
      }
    } else {
      const memory = createMemoryKeyv(options.maxMemoryBytes)
      this.#keyv = memory.keyv
      this.#owned = memory.adapter
      const cache = memory.adapter.cache
      const catalog = new MemoryCatalog(memory.keyv, limits, onEvict, { capacity: cache.maxSize, used: () => cache.calculatedSize })
      const valueGone = (key: string) => {
        const value = VALUE_KEY.exec(key)
        if (value) catalog.forgetValue(value[2] as string, value[1] as string)
      }
      memory.adapter.onEvict = (key) => {
        const detail = DETAIL_KEY.exec(key)
        if (detail) catalog.evicted(detail[1] as string, detail[2] as string)
        else valueGone(key)
      }
      memory.adapter.onExpire = valueGone
      this.#memory = catalog
      this.#catalog = catalog
      this.#values = new KeyvValues(memory.keyv)
    }
    // Without a listener, a Keyv built on Node's EventEmitter (other copies) would crash the process.
    this.#keyv.on('error', this.#onError)
  }

  put(owner: string, record: RecoveryRecord, ttlMs: number): Promise<void> {
    return this.#run('put', async () => {
      invariant(typeof record === 'object' && record !== null, 'a recovery record is required')
      assertKeyParts(owner, record.request_id)
      invariant(typeof ttlMs === 'number' && ttlMs > 0 && Number.isFinite(ttlMs), 'a recovery record needs a positive ttl')
      const ttl = Math.ceil(ttlMs)
      const { envelope, requestBody, responseBody } = splitRecord(record)
      const keys = recordKeys(owner, record.request_id)
      await this.#catalog.ready()
      const expiresAt = Date.now() + ttl
      try {
        // Detail first, then bodies: see lru-adapter.ts for why the order matters in memory.
        const values = [
          { key: keys.detail, value: envelope },
          { key: keys.request, value: requestBody },
          { key: keys.response, value: responseBody },
        ]
        const bytes = approxBytes(envelope) + approxBytes(requestBody) + approxBytes(responseBody)
        await this.#catalog.put(owner, toCatalogEntry(record, expiresAt), ttl, { bytes, values })
      } catch (error) {
        // Not awaited: on a failing store the clean-up could itself wait for the deadline.
        void this.#discard(keys)
        throw error
      }
    })
  }

  list(owner: string): Promise<RecoverySummary[]> {
    return this.#runSteps('list', async (step) => {
      assertKeyParts(owner)
      await this.#catalog.ready()
      // A catalog kept in order is read in order, page by page: no sort of the whole list on the loop.
      const ordered = await this.#catalog.page?.(owner, { limit: Number.POSITIVE_INFINITY }, { step })
      if (ordered) return ordered.entries.map(toSummary)
      return (await this.#catalog.entries(owner, { step })).sort(newestFirst).map(toSummary)
    })
  }

  listPage(owner: string, page: { limit: number; after?: string }): Promise<{ items: RecoverySummary[]; hasMore: boolean } | undefined> {
    return this.#runSteps('list', async (step) => {
      assertKeyParts(owner)
      invariant(Number.isSafeInteger(page.limit) && page.limit > 0, 'a page needs a positive limit')
      await this.#catalog.ready()
      if (this.#catalog.page) {
        const found = await this.#catalog.page(owner, page, { step })
        return found && { items: found.entries.map(toSummary), hasMore: found.hasMore }
      }
      const all = (await this.#catalog.entries(owner, { step })).sort(newestFirst)
      const from = page.after === undefined ? 0 : all.findIndex((e) => e.request_id === page.after) + 1
      if (from === 0 && page.after !== undefined) return undefined
      return { items: all.slice(from, from + page.limit).map(toSummary), hasMore: from + page.limit < all.length }
    })
  }

  lookup(owner: string, hash: string): Promise<RecoverySummary[]> {
    return this.#runSteps('lookup', async (step) => {
      assertKeyParts(owner)
      await this.#catalog.ready()
      const entries = await this.#catalog.entries(owner, { match: (e) => e.request_body_hash === hash, step })
      return entries
        .filter((e) => e.request_body_hash === hash)
        .sort(newestFirst)
        .map(toSummary)
    })
  }

  get(owner: string, requestId: string): Promise<RecoveryRecord | undefined> {
    return this.#run('get', async () => {
      assertKeyParts(owner, requestId)
      await this.#catalog.ready()
      const keys = recordKeys(owner, requestId)
      const [parts, servedAt] = await Promise.all([
        Promise.all([this.#read(keys.detail), this.#read(keys.request), this.#read(keys.response)]),
        // A note that cannot be read leaves the record without it rather than hiding the record.
        this.#values.get(valueKey(owner, servedName(requestId))).catch((error: unknown) => {
          this.#onError(error)
          return undefined
        }),
      ])
      const record = joinRecord(parts[0], parts[1], parts[2])
      if (record && record.request_id === requestId) return withServedAgain(record, servedAt)
      if (parts.every((part) => part !== undefined)) {
        this.#onError(new Error(`model-gateway: recovery record ${requestId} is malformed; ignored`))
        return undefined
      }
      // Keyv answers undefined both for "absent" and for "the store failed": ask the store itself where it can tell.
      const present = await this.#catalog.probe([keys.detail, keys.request, keys.response])
      if (present?.every(Boolean)) throw storeUnavailable('The recovery record could not be read.')
      return undefined
    })
  }

  delete(owner: string, requestId: string): Promise<boolean> {
    return this.#run('delete', async () => {
      assertKeyParts(owner, requestId)
      await this.#catalog.ready()
      return (await this.#catalog.remove(owner, [{ requestId, keys: recordKeys(owner, requestId) }])) > 0
    })
  }

  markServedAgain(owner: string, requestId: string, at: number, ttlMs: number): Promise<void> {
    return this.#run('markServedAgain', async () => {
      assertKeyParts(owner, requestId)
      invariant(Number.isSafeInteger(at) && at > 0, 'served_again_at is Unix seconds')
      await this.#catalog.ready()
      // Set only when unset: the first repeat served is the one that says the answer was not lost.
      await this.#values.claim(valueKey(owner, servedName(requestId)), String(at), ttlMs)
    })
  }

  deleteAll(owner: string, options: { dryRun: boolean }): Promise<number> {
    return this.#runSteps('deleteAll', async (step) => {
      assertKeyParts(owner)
      await this.#catalog.ready()
      if (this.#catalog.removeAll) return this.#catalog.removeAll(owner, options, { step })
      const entries = await this.#catalog.entries(owner, { step })
      if (options.dryRun) return entries.length
      return this.#catalog.remove(
        owner,
        entries.map((e) => ({ requestId: e.request_id, keys: recordKeys(owner, e.request_id) })),
      )
    })
  }

  claimValue(owner: string, name: string, value: string, ttlMs: number): Promise<string | undefined> {
    return this.#run('claimValue', async () => {
      await this.#catalog.ready()
      return this.#values.claim(valueKey(owner, name), value, ttlMs)
    })
  }

  setValue(owner: string, name: string, value: string, ttlMs: number, options: { counted?: boolean } = {}): Promise<void> {
    return this.#run('setValue', async () => {
      await this.#catalog.ready()
      const key = valueKey(owner, name)
      if (options.counted && this.#memory)
        await this.#memory.putValue(owner, key, approxBytes(value) + key.length * 2, () => this.#values.set(key, value, ttlMs))
      else await this.#values.set(key, value, ttlMs)
    })
  }

  getValue(owner: string, name: string): Promise<string | undefined> {
    return this.#run('getValue', async () => {
      await this.#catalog.ready()
      return this.#values.get(valueKey(owner, name))
    })
  }

  deleteValue(owner: string, name: string): Promise<void> {
    return this.#run('deleteValue', async () => {
      await this.#catalog.ready()
      const key = valueKey(owner, name)
      await this.#values.delete(key)
      this.#memory?.forgetValue(owner, key)
    })
  }

  healthy(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false)
    return this.#check('health', Math.min(this.#timeoutMs, HEALTH_TIMEOUT_MS)).then(
      () => true,
      () => false,
    )
  }

  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(storeClosed('The store is closed.'))
    return this.#check('ready', this.#timeoutMs)
  }

  #check(what: string, timeoutMs: number): Promise<void> {
    return guarded(what, timeoutMs, async () => {
      // Redis says whether it is connected without a round trip; the memory store is always there.
      await this.#catalog.ready()
      // Another Keyv says nothing of its backend until asked: one small read.
      if (this.#catalog instanceof KeyvCatalog) await this.#keyv.get(HEALTH_KEY)
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Never `keyv.clear()`: on a shared store it wipes every namespace. The private LRU is emptied; a store the
    // user passed in is disconnected, as `gateway.close()` promises, within the store deadline so shutdown never hangs.
    if (this.#owned) this.#owned.cache.clear()
    else await guarded('close', this.#timeoutMs, () => this.#catalog.disconnect()).catch((error: unknown) => this.#onError(error))
    this.#keyv.off('error', this.#onError)
  }

  /** One record value: through the catalog when it reads large values in slices (Redis), else through Keyv. */
  #read(key: string): Promise<unknown> {
    return this.#catalog.read ? this.#catalog.read(key) : (this.#keyv.get(key) as Promise<unknown>)
  }

  #run<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return this.#runSteps(what, operation)
  }

  /** Like #run, for a walk over a catalog: the deadline holds for each page, so an owner of any size can be walked. */
  #runSteps<T>(what: string, operation: (step: () => void) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(storeClosed("The gateway's store is closed."))
    return guardedSteps(what, this.#timeoutMs, operation)
  }

  /** Best effort after a failed put; whatever stays behind expires with its ttl and never enters the catalog. */
  async #discard(keys: RecordKeys): Promise<void> {
    try {
      await deleteRecordKeys(this.#keyv, keys)
    } catch (error) {
      this.#onError(error)
    }
  }
}

/** The owner's value that holds when a record's answer was first served again. */
function servedName(requestId: string): string {
  return `served:${requestId}`
}

/** The record with its `served_again_at`, when its answer was served again (a value this store wrote: Unix seconds). */
function withServedAgain(record: RecoveryRecord, servedAt: string | undefined): RecoveryRecord {
  const at = servedAt === undefined ? Number.NaN : Number(servedAt)
  return Number.isSafeInteger(at) && at > 0 ? { ...record, served_again_at: at } : record
}
