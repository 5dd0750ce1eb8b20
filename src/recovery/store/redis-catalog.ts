import type Keyv from 'keyv'
import type { OwnerCatalog } from './catalog.js'
import { storeUnavailable } from './guard.js'
import { type CatalogEntry, catalogKey, parseCatalogEntry, type RecordKeys, type RecordValue, recordKeys } from './layout.js'
import type { Eviction } from './memory-catalog.js'
import { isUnsupportedExpireMode, RedisLink, type RedisMulti } from './redis-link.js'

function parseField(field: string, value: unknown): CatalogEntry | undefined {
  try {
    const entry = parseCatalogEntry(JSON.parse(String(value)))
    return entry && entry.request_id === field ? entry : undefined
  } catch {
    return undefined
  }
}

/**
 * The per-owner catalog on Redis: one hash `…idx:{owner}` per owner,
 * field = request id, value = the JSON catalog entry (with `expires_at`). A record is written in one MULTI — its
 * three values, the catalog entry, the hash's expiry and its length — so it costs one round trip and is listed
 * only once all of it is in. Nothing is a read-modify-write of the whole catalog, so any number of gateway
 * processes can share one Redis. The hash is kept alive as long as its newest entry with `PEXPIRE NX` +
 * `PEXPIRE GT` (Redis 7; plain PEXPIRE on older servers, fine as one gateway uses one ttl).
 *
 * Keys follow the adapter's own prefix scheme (Keyv's `namespace:` when `useKeyPrefix`, then KeyvRedis's
 * `namespace` + `keyPrefixSeparator`), so the hash sits beside the record keys of the same namespace; the `{owner}`
 * hash tag keeps every key of one owner in one cluster slot, which the MULTIs need.
 */
export class RedisCatalog implements OwnerCatalog {
  readonly #link: RedisLink
  readonly #onError: (error: unknown) => void
  readonly #maxRecords: number
  readonly #onEvict: (eviction: Eviction) => void
  #legacyExpire = false

  /** `waitMs`: how long calls wait for the first connection (never for a lost one). */
  constructor(
    keyv: Keyv,
    options: { waitMs: number; onError: (error: unknown) => void; maxRecords: number; onEvict: (eviction: Eviction) => void },
  ) {
    this.#link = new RedisLink(keyv, { waitMs: options.waitMs, onError: options.onError })
    this.#onError = options.onError
    this.#maxRecords = options.maxRecords
    this.#onEvict = options.onEvict
  }

  ready(): Promise<void> {
    return this.#link.ready()
  }

  async put(owner: string, entry: CatalogEntry, ttlMs: number, record: { values: RecordValue[] }): Promise<void> {
    const link = this.#link
    const key = link.key(catalogKey(owner))
    const ttl = Math.max(1, Math.ceil(ttlMs))
    // Serialised exactly as Keyv's own `set` would, with the same `expires` as the catalog entry, so `keyv.get` reads them.
    const values = await Promise.all(record.values.map(async (v) => [link.key(v.key), await link.serialize(v.value, entry.expires_at)]))
    const transaction = (legacyExpire: boolean): RedisMulti => {
      const multi = link.client.multi()
      for (const [k, v] of values) multi.set(k as string, v as string, { PX: ttl })
      multi.hSet(key, entry.request_id, JSON.stringify(entry))
      if (legacyExpire) multi.pExpire(key, ttl)
      else multi.pExpire(key, ttl, 'NX').pExpire(key, ttl, 'GT')
      return multi.hLen(key)
    }
    let replies: unknown[]
    try {
      replies = await transaction(this.#legacyExpire).exec()
    } catch (error) {
      if (this.#legacyExpire || !isUnsupportedExpireMode(error)) {
        this.#withdraw(key, entry.request_id)
        throw error
      }
      this.#legacyExpire = true
      try {
        replies = await transaction(true).exec()
      } catch (retryError) {
        this.#withdraw(key, entry.request_id)
        throw retryError
      }
    }
    if (!replies.slice(0, values.length).every((reply) => String(reply) === 'OK')) {
      this.#withdraw(key, entry.request_id)
      throw storeUnavailable('The recovery store did not take a write.')
    }
    // Trimmed in batches (a hundredth of the cap past it), so an owner at the cap does not cost a scan per record.
    if (Number(replies.at(-1)) > this.#maxRecords + Math.floor(this.#maxRecords / 100)) await this.#trim(owner, key)
  }

  async entries(owner: string): Promise<CatalogEntry[]> {
    const client = this.#link.client
    const key = this.#link.key(catalogKey(owner))
    const raw = await client.hGetAll(key)
    const pairs: Array<[unknown, unknown]> =
      raw instanceof Map ? [...raw.entries()] : typeof raw === 'object' && raw !== null ? Object.entries(raw) : []
    const now = Date.now()
    const stale: string[] = []
    const candidates: CatalogEntry[] = []
    for (const [field, value] of pairs) {
      const entry = parseField(String(field), value)
      if (entry && entry.expires_at > now) candidates.push(entry)
      else stale.push(String(field))
    }
    // Detail keys can be gone before the entry expires (deleted, evicted by Redis maxmemory).
    const present = await Promise.all(candidates.map((e) => client.exists(this.#link.key(recordKeys(owner, e.request_id).detail))))
    const live: CatalogEntry[] = []
    candidates.forEach((entry, i) => {
      if (present[i] === 1) live.push(entry)
      else stale.push(entry.request_id)
    })
    // Dropping a stale field is safe against concurrent writers: ids are unique and a put writes its values and
    // its entry in one transaction, so an entry whose detail is missing can never become valid again.
    if (stale.length > 0) await client.hDel(key, stale)
    return live
  }

  async remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    if (records.length === 0) return 0
    const link = this.#link
    const multi = link.client.multi().hDel(
      link.key(catalogKey(owner)),
      records.map((r) => r.requestId),
    )
    for (const { keys } of records) multi.unlink(link.key(keys.detail))
    multi.unlink(records.flatMap(({ keys }) => [link.key(keys.request), link.key(keys.response)]))
    const replies = await multi.exec()
    // UNLINK counts a detail key only when it was there and unexpired: exactly one caller wins a race.
    return replies.slice(1, 1 + records.length).filter((n) => Number(n) > 0).length
  }

  async probe(keys: string[]): Promise<boolean[]> {
    const counts = await Promise.all(keys.map((k) => this.#link.client.exists(this.#link.key(k))))
    return counts.map((n) => n === 1)
  }

  disconnect(): Promise<void> {
    return this.#link.disconnect()
  }

  /** Takes back the entry of a write that failed; not awaited, but sent before any later command on this connection. */
  #withdraw(key: string, requestId: string): void {
    this.#link.client.hDel(key, requestId).catch(this.#onError)
  }

  /** Removes an owner's oldest records past the cap (request ids grow with time), reporting each. */
  async #trim(owner: string, key: string): Promise<void> {
    const ids = ((await this.#link.client.hKeys(key)) as unknown[]).map(String).sort()
    const oldest = ids.slice(0, Math.max(0, ids.length - this.#maxRecords))
    if (oldest.length === 0) return
    await this.remove(
      owner,
      oldest.map((requestId) => ({ requestId, keys: recordKeys(owner, requestId) })),
    )
    for (const requestId of oldest) this.#onEvict({ owner, requestId, reason: 'owner_record_limit' })
  }
}
