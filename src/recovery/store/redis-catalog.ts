import type Keyv from 'keyv'
import type { CatalogWalk, OwnerCatalog } from './catalog.js'
import { storeUnavailable } from './guard.js'
import { type CatalogEntry, catalogKey, parseCatalogEntry, type RecordKeys, type RecordValue, recordKeys } from './layout.js'
import type { Eviction } from './memory-catalog.js'
import { isUnsupportedExpireMode, RedisLink, type RedisMulti } from './redis-link.js'

/**
 * Fields asked for per HSCAN call and records deleted per transaction: large enough that an owner with 300 000
 * records takes a few hundred round trips, small enough that no single command holds Redis for more than about a
 * millisecond.
 */
const PAGE = 1000

/** One page of catalog fields, each with its parsed entry (undefined when the value is not one). */
type Page = Array<{ field: string; entry: CatalogEntry | undefined }>

function parseField(field: string, value: unknown): CatalogEntry | undefined {
  try {
    const entry = parseCatalogEntry(JSON.parse(String(value)))
    return entry && entry.request_id === field ? entry : undefined
  } catch {
    return undefined
  }
}

/**
 * The per-owner catalog on Redis (a single server, a cluster, or Valkey): one hash `…idx:{owner}` per owner,
 * field = request id, value = the JSON catalog entry (with `expires_at`). A record is written in one MULTI — its
 * three values, the catalog entry, the hash's expiry and its length — so it costs one round trip and is listed
 * only once all of it is in. Nothing is a read-modify-write of the whole catalog, so any number of gateway
 * processes can share one Redis. The hash is kept alive as long as its newest entry with `PEXPIRE NX` +
 * `PEXPIRE GT` (Redis 7; plain PEXPIRE on older servers, fine as one gateway uses one ttl). Reads walk the hash with
 * HSCAN and delete in batches, so an owner of any size never makes one command hold Redis for long.
 *
 * Keys follow the adapter's own prefix scheme (Keyv's `namespace:` when `useKeyPrefix`, then KeyvRedis's
 * `namespace` + `keyPrefixSeparator`), so the hash sits beside the record keys of the same namespace; the `{owner}`
 * hash tag keeps every key of one owner in one cluster slot, which the MULTIs need.
 */
export class RedisCatalog implements OwnerCatalog {
  readonly #link: RedisLink

  /** The connection, for the store's single-key values (idempotency claims) that need `SET NX`. */
  get link(): RedisLink {
    return this.#link
  }
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
    const values = await Promise.all(
      record.values.map(async (v): Promise<[string, string]> => [link.key(v.key), await link.serialize(v.value, entry.expires_at)]),
    )
    const transaction = (legacyExpire: boolean): RedisMulti => {
      const multi = link.client.multi()
      for (const [k, v] of values) multi.set(k, v, { PX: ttl })
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
    if (Number(replies.at(-1)) > this.#maxRecords + Math.floor(this.#maxRecords / 100)) await this.#trim(owner)
  }

  async entries(owner: string, walk: CatalogWalk = {}): Promise<CatalogEntry[]> {
    const live: CatalogEntry[] = []
    await this.#walkLive(owner, walk, (entries) => {
      live.push(...entries)
    })
    return live
  }

  async remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    let existed = 0
    for (let i = 0; i < records.length; i += PAGE) existed += await this.#removeBatch(owner, records.slice(i, i + PAGE))
    return existed
  }

  async removeAll(owner: string, options: { dryRun: boolean }, walk: CatalogWalk = {}): Promise<number> {
    let count = 0
    if (options.dryRun) {
      await this.#walkLive(owner, { step: walk.step }, (entries) => {
        count += entries.length
      })
      return count
    }
    // Every field HSCAN hands back is deleted with its record in one transaction per page; deleting fields already
    // returned never makes HSCAN miss one that was there all along, and a field seen twice is counted once (its
    // detail key is gone the second time).
    await this.#walk(owner, walk.step, async (page) => {
      count += await this.#removeBatch(
        owner,
        page.map(({ field }) => ({ requestId: field, keys: recordKeys(owner, field) })),
      )
    })
    return count
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

  /** Walks the owner's catalog one HSCAN page at a time, asking for the next page while this one is visited. */
  async #walk(owner: string, step: (() => void) | undefined, visit: (page: Page) => Promise<void> | void): Promise<void> {
    const client = this.#link.client
    const key = this.#link.key(catalogKey(owner))
    let next = client.hScan(key, '0', { COUNT: PAGE })
    for (;;) {
      const reply = await next
      const cursor = String(reply.cursor)
      if (cursor !== '0') {
        next = client.hScan(key, cursor, { COUNT: PAGE })
        // Settled by the next turn of the loop, or abandoned when `visit` throws: never an unhandled rejection.
        next.catch(() => {})
      }
      if (reply.entries.length > 0) {
        await visit(reply.entries.map(({ field, value }) => ({ field: String(field), entry: parseField(String(field), value) })))
      }
      step?.()
      if (cursor === '0') return
    }
  }

  /**
   * Walks the owner's live entries page by page: expired and malformed entries, and entries whose detail key is gone
   * (deleted, evicted by Redis maxmemory), are dropped from the catalog on the way; only entries `match` accepts are
   * checked and handed over, each once.
   */
  async #walkLive(owner: string, { match, step }: CatalogWalk, take: (entries: CatalogEntry[]) => void): Promise<void> {
    const client = this.#link.client
    const handed = new Set<string>()
    const now = Date.now()
    await this.#walk(owner, step, async (page) => {
      const stale: string[] = []
      const candidates: CatalogEntry[] = []
      for (const { field, entry } of page) {
        if (!entry || entry.expires_at <= now) stale.push(field)
        else if ((!match || match(entry)) && !handed.has(field)) {
          handed.add(field)
          candidates.push(entry)
        }
      }
      const live: CatalogEntry[] = []
      const details = candidates.map((e) => this.#link.key(recordKeys(owner, e.request_id).detail))
      // One EXISTS over the page's detail keys answers the usual case (all there) in one command; only a page where
      // some are missing is checked key by key.
      if (candidates.length > 0 && (await client.exists(details)) === candidates.length) live.push(...candidates)
      else if (candidates.length > 0) {
        const checks = client.multi()
        for (const detail of details) checks.exists(detail)
        const present = await checks.execAsPipeline()
        candidates.forEach((entry, i) => {
          if (Number(present[i]) === 1) live.push(entry)
          else stale.push(entry.request_id)
        })
      }
      // Dropping a stale entry, and whatever is left of its record, is safe against concurrent writers: ids are unique
      // and a put writes its values and its entry in one transaction, so such an entry can never become valid again.
      if (stale.length > 0)
        await this.#removeBatch(
          owner,
          stale.map((requestId) => ({ requestId, keys: recordKeys(owner, requestId) })),
        )
      take(live)
    })
  }

  /** Removes up to one page of records in one transaction; resolves to how many existed. */
  async #removeBatch(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    if (records.length === 0) return 0
    const link = this.#link
    const replies = await link.client
      .multi()
      .hDel(
        link.key(catalogKey(owner)),
        records.map((r) => r.requestId),
      )
      .unlink(records.map(({ keys }) => link.key(keys.detail)))
      .unlink(records.flatMap(({ keys }) => [link.key(keys.request), link.key(keys.response)]))
      .exec()
    // UNLINK counts a detail key only when it was there and unexpired (once, however often it is named): exactly one
    // caller wins a race.
    return Number(replies[1])
  }

  /** Removes an owner's oldest records past the cap (request ids grow with time), reporting each. */
  async #trim(owner: string): Promise<void> {
    const ids = new Set<string>()
    await this.#walk(owner, undefined, (page) => {
      for (const { field } of page) ids.add(field)
    })
    const oldest = [...ids].sort().slice(0, Math.max(0, ids.size - this.#maxRecords))
    if (oldest.length === 0) return
    await this.remove(
      owner,
      oldest.map((requestId) => ({ requestId, keys: recordKeys(owner, requestId) })),
    )
    for (const requestId of oldest) this.#onEvict({ owner, requestId, reason: 'owner_record_limit' })
  }
}
