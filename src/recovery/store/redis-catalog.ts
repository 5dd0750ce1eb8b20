import type Keyv from 'keyv'
import type { OwnerCatalog } from './catalog.js'
import { storeUnavailable } from './guard.js'
import { type CatalogEntry, catalogKey, parseCatalogEntry, type RecordKeys, recordKeys } from './layout.js'
import type { Eviction } from './memory-catalog.js'

/** The part of a node-redis v5 MULTI this catalog uses. */
interface RedisMulti {
  hSet(key: string, field: string, value: string): RedisMulti
  hDel(key: string, fields: string | string[]): RedisMulti
  pExpire(key: string, ms: number, mode?: 'NX' | 'GT'): RedisMulti
  hLen(key: string): RedisMulti
  exists(keys: string | string[]): RedisMulti
  unlink(keys: string | string[]): RedisMulti
  exec(): Promise<unknown[]>
}

/** The part of a node-redis v5 client (camelCase commands) the store uses. */
export interface RedisLikeClient {
  readonly isOpen?: boolean
  readonly isReady?: boolean
  hGetAll(key: string): Promise<unknown>
  hKeys(key: string): Promise<unknown>
  hDel(key: string, fields: string | string[]): Promise<number>
  exists(keys: string | string[]): Promise<number>
  set(key: string, value: string, options: { condition?: 'NX'; expiration: { type: 'PX'; value: number } }): Promise<unknown>
  get(key: string): Promise<unknown>
  del(keys: string | string[]): Promise<number>
  multi(): RedisMulti
  connect?(): Promise<unknown>
  once?(event: 'ready', listener: () => void): unknown
  off?(event: 'ready', listener: () => void): unknown
}

/** The part of @keyv/redis's adapter (KeyvRedis) used to reach the client and mirror its key prefixes. */
interface RedisAdapterLike {
  client: RedisLikeClient
  namespace?: string
  keyPrefixSeparator?: string
  createKeyPrefix?(key: string, namespace?: string): string
  getClient?(): Promise<unknown>
  disconnect?(force?: boolean): Promise<void>
}

const isFunction = (value: unknown): boolean => typeof value === 'function'

function isRedisAdapter(store: unknown): store is RedisAdapterLike {
  if (typeof store !== 'object' || store === null) return false
  const client: unknown = (store as { client?: unknown }).client
  if (typeof client !== 'object' || client === null) return false
  const c = client as Record<string, unknown>
  return ['hSet', 'hGetAll', 'hDel', 'pExpire', 'exists', 'unlink', 'multi'].every((name) => isFunction(c[name]))
}

/** Whether this Keyv sits on a node-redis v5 client (@keyv/redis 4+/5, any copy of the packages). */
export function isRedisKeyv(keyv: Keyv): boolean {
  return isRedisAdapter(keyv.store)
}

/** Redis < 7 rejects PEXPIRE's NX/GT flags (arity error at queue time: node-redis rejects, nothing ran). */
function isUnsupportedExpireMode(error: unknown): boolean {
  const texts = [String((error as { message?: unknown })?.message ?? error)]
  const replies = (error as { replies?: unknown })?.replies
  if (Array.isArray(replies)) for (const reply of replies) texts.push(String((reply as { message?: unknown })?.message ?? reply))
  return texts.some((text) => /wrong number of arguments|syntax error|unsupported option/i.test(text))
}

/**
 * The per-owner catalog on Redis: one hash `…idx:{owner}` per owner, field = request id, value = the
 * JSON catalog entry (with `expires_at`). Writes are single commands (HSET, HDEL in a MULTI with the
 * record keys' UNLINK), never a read-modify-write of the whole catalog, so any number of gateway
 * processes can share one Redis. The hash is kept alive as long as its newest entry with
 * `PEXPIRE NX` + `PEXPIRE GT` (Redis 7; plain PEXPIRE on older servers, fine as one gateway uses one ttl).
 *
 * Keys follow the adapter's own prefix scheme (Keyv's `namespace:` when `useKeyPrefix`, then KeyvRedis's
 * `namespace` + `keyPrefixSeparator`), so the hash sits beside the record keys of the same namespace.
 */
export class RedisCatalog implements OwnerCatalog {
  readonly #keyv: Keyv
  readonly #adapter: RedisAdapterLike
  readonly #waitMs: number
  readonly #onError: (error: unknown) => void
  readonly #maxRecords: number
  readonly #onEvict: (eviction: Eviction) => void
  #connecting: Promise<void> | undefined
  #waiting: Promise<void> | undefined
  /** Whether Redis has been ready once: until then every call waits for it; after, a lost connection fails fast. */
  #everReady = false
  #legacyExpire = false

  /** `waitMs`: how long calls wait for the first connection (never for a lost one). */
  constructor(
    keyv: Keyv,
    options: { waitMs: number; onError: (error: unknown) => void; maxRecords: number; onEvict: (eviction: Eviction) => void },
  ) {
    if (!isRedisAdapter(keyv.store)) throw new TypeError('RedisCatalog needs a Keyv on a Redis adapter')
    this.#keyv = keyv
    this.#adapter = keyv.store
    this.#waitMs = options.waitMs
    this.#onError = options.onError
    this.#maxRecords = options.maxRecords
    this.#onEvict = options.onEvict
  }

  /** The key as stored in Redis, mirroring how Keyv and KeyvRedis prefix it. */
  physicalKey(key: string): string {
    const keyv = this.#keyv
    const logical = isFunction(keyv._getKeyPrefix)
      ? keyv._getKeyPrefix(key)
      : keyv.useKeyPrefix !== false && keyv.namespace
        ? `${keyv.namespace}:${key}`
        : key
    const adapter = this.#adapter
    if (typeof adapter.createKeyPrefix === 'function') return adapter.createKeyPrefix(logical, adapter.namespace)
    return adapter.namespace ? `${adapter.namespace}${adapter.keyPrefixSeparator ?? '::'}${logical}` : logical
  }

  get #client(): RedisLikeClient {
    return this.#adapter.client
  }

  /** The client, for the store's single-key values (idempotency claims) that need `SET NX`. */
  get client(): RedisLikeClient {
    return this.#adapter.client
  }

  async ready(): Promise<void> {
    const client = this.#client
    if (client.isReady === true) {
      this.#everReady = true
      return
    }
    if (client.isReady === undefined) {
      // A cluster only says whether it is open, and it is open before it knows its slots: concurrent first
      // commands would fail, so they all wait for the one connect. After that the per-call deadline bounds every command.
      if (client.isOpen === false) this.#connect()
      await this.#connecting
      return
    }
    if (client.isOpen === false) this.#connect()
    // Until Redis has been up once, every call waits (up to waitMs) for the first connection, so a slow cold start
    // within the writer's retries loses nothing. Once Redis has been up, a client that is not ready means Redis is
    // down: fail now instead of queueing, and let the client (or the connect just started) reconnect in the background.
    if (this.#everReady) throw storeUnavailable('Redis is not connected.')
    this.#waiting ??= this.#waitReady().finally(() => {
      this.#waiting = undefined
    })
    await this.#waiting
    this.#everReady = true
  }

  readonly batchWrites = true

  async add(owner: string, entry: CatalogEntry, ttlMs: number, record: { bytes: number; written: string[] }): Promise<void> {
    const key = this.physicalKey(catalogKey(owner))
    const value = JSON.stringify(entry)
    const ttl = Math.max(1, Math.ceil(ttlMs))
    const written = record.written.map((k) => this.physicalKey(k))
    // One round trip: the written keys are confirmed in the same transaction that adds the entry.
    let replies: unknown[] | undefined
    if (!this.#legacyExpire) {
      try {
        replies = await this.#client
          .multi()
          .exists(written)
          .hSet(key, entry.request_id, value)
          .pExpire(key, ttl, 'NX')
          .pExpire(key, ttl, 'GT')
          .hLen(key)
          .exec()
      } catch (error) {
        if (!isUnsupportedExpireMode(error)) throw error
        this.#legacyExpire = true
      }
    }
    replies ??= await this.#client.multi().exists(written).hSet(key, entry.request_id, value).pExpire(key, ttl).hLen(key).exec()
    if (Number(replies[0]) !== written.length) {
      // A write Redis did not keep (maxmemory, a failing SET the adapter reported as success): take the entry back.
      await this.#client.hDel(key, entry.request_id)
      throw storeUnavailable('The recovery record did not stay in the store (evicted or rejected).')
    }
    // Trimmed in batches (a hundredth of the cap past it), so an owner at the cap does not cost a scan per record.
    if (Number(replies.at(-1)) > this.#maxRecords + Math.floor(this.#maxRecords / 100)) await this.#trim(owner, key)
  }

  /** Removes an owner's oldest records past the cap (request ids grow with time), reporting each. */
  async #trim(owner: string, key: string): Promise<void> {
    const ids = ((await this.#client.hKeys(key)) as unknown[]).map(String).sort()
    const oldest = ids.slice(0, Math.max(0, ids.length - this.#maxRecords))
    if (oldest.length === 0) return
    await this.remove(
      owner,
      oldest.map((requestId) => ({ requestId, keys: recordKeys(owner, requestId) })),
    )
    for (const requestId of oldest) this.#onEvict({ owner, requestId, reason: 'owner_record_limit' })
  }

  async entries(owner: string): Promise<CatalogEntry[]> {
    const client = this.#client
    const key = this.physicalKey(catalogKey(owner))
    const raw = await client.hGetAll(key)
    const pairs: Array<[unknown, unknown]> =
      raw instanceof Map ? [...raw.entries()] : typeof raw === 'object' && raw !== null ? Object.entries(raw) : []
    const now = Date.now()
    const stale: string[] = []
    const candidates: CatalogEntry[] = []
    for (const [field, value] of pairs) {
      let entry: CatalogEntry | undefined
      try {
        entry = parseCatalogEntry(JSON.parse(String(value)))
      } catch {
        entry = undefined
      }
      if (entry && entry.request_id === String(field) && entry.expires_at > now) candidates.push(entry)
      else stale.push(String(field))
    }
    // Detail keys can be gone before the entry expires (deleted, evicted by Redis maxmemory).
    const present = await Promise.all(candidates.map((e) => client.exists(this.physicalKey(recordKeys(owner, e.request_id).detail))))
    const live: CatalogEntry[] = []
    candidates.forEach((entry, i) => {
      if (present[i] === 1) live.push(entry)
      else stale.push(entry.request_id)
    })
    // Dropping a stale field is safe against concurrent writers: ids are unique and a put writes its
    // detail before its catalog entry, so an entry whose detail is missing can never become valid again.
    if (stale.length > 0) await client.hDel(key, stale)
    return live
  }

  async remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    if (records.length === 0) return 0
    const multi = this.#client.multi().hDel(
      this.physicalKey(catalogKey(owner)),
      records.map((r) => r.requestId),
    )
    for (const { keys } of records) multi.unlink(this.physicalKey(keys.detail))
    multi.unlink(records.flatMap(({ keys }) => [this.physicalKey(keys.request), this.physicalKey(keys.response)]))
    const replies = await multi.exec()
    // UNLINK counts a detail key only when it was there and unexpired: exactly one caller wins a race.
    return replies.slice(1, 1 + records.length).filter((n) => Number(n) > 0).length
  }

  async probe(keys: string[]): Promise<boolean[]> {
    const counts = await Promise.all(keys.map((k) => this.#client.exists(this.physicalKey(k))))
    return counts.map((n) => n === 1)
  }

  async disconnect(): Promise<void> {
    // A graceful close (QUIT) waits for every queued command: forever while Redis is down and the client
    // queues offline. A client that is not ready has nothing worth waiting for, so it is destroyed.
    if (this.#client.isReady === false && typeof this.#adapter.disconnect === 'function') await this.#adapter.disconnect(true)
    else await this.#keyv.disconnect()
  }

  #connect(): void {
    if (this.#connecting) return
    const adapter = this.#adapter
    this.#connecting = Promise.resolve()
      .then(() => (typeof adapter.getClient === 'function' ? adapter.getClient() : adapter.client.connect?.()))
      .then(
        () => undefined,
        (error: unknown) => this.#onError(error),
      )
      .finally(() => {
        this.#connecting = undefined
      })
  }

  /** Waits for 'ready', for the connection attempt to end, or for `waitMs`, whichever comes first. */
  #waitReady(): Promise<void> {
    const client = this.#client
    return new Promise<void>((resolve, reject) => {
      let settled = false
      const finish = () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        client.off?.('ready', finish)
        if (client.isReady === true) {
          resolve()
        } else {
          reject(storeUnavailable(`Redis is not connected (waited up to ${this.#waitMs} ms).`))
        }
      }
      const timer = setTimeout(finish, this.#waitMs)
      timer.unref()
      client.once?.('ready', finish)
      void this.#connecting?.then(finish)
      if (client.isReady === true) finish()
    })
  }
}
