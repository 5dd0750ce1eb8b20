import type Keyv from 'keyv'
import type { CatalogPage, CatalogWalk, OwnerCatalog } from './catalog.js'
import { storeUnavailable } from './guard.js'
import { type CatalogEntry, catalogKey, orderKey, orderMember, type RecordKeys, type RecordValue, recordKeys } from './layout.js'
import type { Eviction } from './memory-catalog.js'
import { isUnsupportedExpireMode, RedisLink, type RedisMulti } from './redis-link.js'
import { type FieldPage, OwnerOrder, parseField, type Removal, type Trim } from './redis-order.js'

/**
 * Fields asked for per HSCAN call and records deleted per transaction: large enough that an owner with 300 000
 * records takes a few hundred round trips, small enough that no single command holds Redis for more than about a
 * millisecond.
 */
const PAGE = 1000

/**
 * A record's withdrawal (KEYS: its catalog hash, its order set and, if it has one, its first value; ARGV: its request id
 * and order member): nothing when the value is there, else the entry and the member go.
 */
const WITHDRAW_SCRIPT = `if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`

/**
 * The per-owner catalog on Redis (a single server, a cluster, or Valkey): one hash `…idx:{owner}` per owner,
 * field = request id, value = the JSON catalog entry (with `expires_at`). A record is written in one MULTI — its
 * three values, the catalog entry, the hash's expiry and its length — so it costs one round trip and is listed
 * only once all of it is in. Nothing is a read-modify-write of the whole catalog, so any number of gateway
 * processes can share one Redis. The hash is kept alive as long as its newest entry with `PEXPIRE NX` +
 * `PEXPIRE GT` (Redis 7; plain PEXPIRE on older servers, fine as one gateway uses one ttl). Reads walk the hash with
 * HSCAN and delete in batches, so an owner of any size never makes one command hold Redis for long. Beside the hash,
 * a sorted set `…ord:{owner}` holds the entries' order (written and removed in the same transactions; see
 * redis-order.ts), so a page of the list and the owner's oldest records are read without reading the whole catalog.
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
  readonly #order: OwnerOrder
  #legacyExpire = false

  /** `waitMs`: how long calls wait for the first connection (never for a lost one). */
  constructor(
    keyv: Keyv,
    options: {
      waitMs: number
      onError: (error: unknown) => void
      maxRecords: number
      onEvict: (eviction: Eviction) => void
      onTrim: (trim: Trim) => void
    },
  ) {
    this.#link = new RedisLink(keyv, { waitMs: options.waitMs, onError: options.onError })
    this.#onError = options.onError
    this.#maxRecords = options.maxRecords
    this.#order = new OwnerOrder(this.#link, {
      maxRecords: options.maxRecords,
      onEvict: options.onEvict,
      onTrim: options.onTrim,
      onError: options.onError,
      walk: (owner, step, visit) => this.#walk(owner, step, visit),
      removeBatch: (owner, records) => this.#removeBatch(owner, records),
    })
  }

  ready(): Promise<void> {
    return this.#link.ready()
  }

  async put(owner: string, entry: CatalogEntry, ttlMs: number, record: { values: RecordValue[] }): Promise<void> {
    const link = this.#link
    const key = link.key(catalogKey(owner))
    const order = link.key(orderKey(owner))
    const member = orderMember(entry)
    const ttl = Math.max(1, Math.ceil(ttlMs))
    // Serialised exactly as Keyv's own `set` would, with the same `expires` as the catalog entry, so `keyv.get` reads them.
    const values = await Promise.all(
      record.values.map(
        async (v): Promise<[string, string | Buffer]> => [link.key(v.key), await link.serialize(v.value, entry.expires_at)],
      ),
    )
    const withdraw = () => this.#withdraw(owner, entry.request_id, member, values[0]?.[0])
    const transaction = (legacyExpire: boolean): RedisMulti => {
      const multi = link.client.multi()
      for (const [k, v] of values) multi.set(k, v, { PX: ttl })
      multi.hSet(key, entry.request_id, JSON.stringify(entry))
      multi.zAdd(order, { score: 0, value: member })
      for (const k of [key, order]) {
        if (legacyExpire) multi.pExpire(k, ttl)
        else multi.pExpire(k, ttl, 'NX').pExpire(k, ttl, 'GT')
      }
      return multi.hLen(key).zCard(order)
    }
    let replies: unknown[]
    try {
      replies = await transaction(this.#legacyExpire).exec()
    } catch (error) {
      if (this.#legacyExpire || !isUnsupportedExpireMode(error)) {
        withdraw()
        throw error
      }
      this.#legacyExpire = true
      try {
        replies = await transaction(true).exec()
      } catch (retryError) {
        withdraw()
        throw retryError
      }
    }
    if (!replies.slice(0, values.length).every((reply) => String(reply) === 'OK')) {
      withdraw()
      throw storeUnavailable("The gateway's store did not take a write.")
    }
    // Trimmed once a hundredth of the cap past it, by one trim per owner at a time (see redis-order.ts).
    const [listed, ordered] = replies.slice(-2).map(Number) as [number, number]
    if (listed > this.#maxRecords + Math.floor(this.#maxRecords / 100)) await this.#order.trim(owner, ordered < listed)
  }

  page(owner: string, page: { limit: number; after?: string }, walk: CatalogWalk = {}): Promise<CatalogPage | undefined> {
    return this.#order.page(owner, page, walk.step, (entries) => this.#liveOf(owner, entries))
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
    for (let i = 0; i < records.length; i += PAGE) {
      const batch = records.slice(i, i + PAGE)
      // The entries give the order members to remove with them.
      const values = await this.#link.client.hmGet(
        this.#link.key(catalogKey(owner)),
        batch.map((r) => r.requestId),
      )
      existed += await this.#removeBatch(
        owner,
        batch.map((r, j) => {
          const entry = parseField(r.requestId, values[j])
          return entry ? { ...r, member: orderMember(entry) } : r
        }),
      )
    }
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
      count += await this.#removeBatch(owner, page.map(removal(owner)))
    })
    // Order members whose entries could not be read (malformed) go with the set once the catalog is empty.
    const client = this.#link.client
    if ((await client.hLen(this.#link.key(catalogKey(owner)))) === 0) await client.unlink(this.#link.key(orderKey(owner)))
    return count
  }

  read(key: string): Promise<unknown> {
    return this.#link.read(key)
  }

  async probe(keys: string[]): Promise<boolean[]> {
    const counts = await Promise.all(keys.map((k) => this.#link.client.exists(this.#link.key(k))))
    return counts.map((n) => n === 1)
  }

  disconnect(): Promise<void> {
    return this.#link.disconnect()
  }

  /**
   * Unlists a record after a write that failed, unless its first value is there. A MULTI wrote all of a record or none
   * of it, so a value that is there is a record that is whole, whichever write left it. And the withdrawal of a failed
   * attempt can reach the server after the retry that wrote the record (a cluster re-routes commands while a replica
   * takes over its master), where unlisting it lost a record the gateway had reported kept.
   */
  #withdraw(owner: string, requestId: string, member: string, firstValue: string | undefined): void {
    const link = this.#link
    const keys = [link.key(catalogKey(owner)), link.key(orderKey(owner))]
    if (firstValue !== undefined) keys.push(firstValue)
    link.client.eval(WITHDRAW_SCRIPT, { keys, arguments: [requestId, member] }).catch(this.#onError)
  }

  /** Walks the owner's catalog one HSCAN page at a time, asking for the next page while this one is visited. */
  async #walk(owner: string, step: (() => void) | undefined, visit: (page: FieldPage) => Promise<void> | void): Promise<void> {
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
    const handed = new Set<string>()
    const now = Date.now()
    await this.#walk(owner, step, async (page) => {
      const stale: Removal[] = []
      const candidates: CatalogEntry[] = []
      for (const { field, entry } of page) {
        if (!entry || entry.expires_at <= now) stale.push(removal(owner)({ field, entry }))
        else if ((!match || match(entry)) && !handed.has(field)) {
          handed.add(field)
          candidates.push(entry)
        }
      }
      const { live, gone } = await this.#liveOf(owner, candidates)
      for (const entry of gone) stale.push(removal(owner)({ field: entry.request_id, entry }))
      // Dropping a stale entry, and whatever is left of its record, is safe against concurrent writers: ids are unique
      // and a put writes its values and its entry in one transaction, so such an entry can never become valid again.
      if (stale.length > 0) await this.#removeBatch(owner, stale)
      take(live)
    })
  }

  /** Splits entries into those whose detail key is there and those whose detail is gone (deleted, evicted by Redis). */
  async #liveOf(owner: string, candidates: CatalogEntry[]): Promise<{ live: CatalogEntry[]; gone: CatalogEntry[] }> {
    const client = this.#link.client
    if (candidates.length === 0) return { live: [], gone: [] }
    const details = candidates.map((e) => this.#link.key(recordKeys(owner, e.request_id).detail))
    // One EXISTS over the page's detail keys answers the usual case (all there) in one command; only a page where
    // some are missing is checked key by key.
    if ((await client.exists(details)) === candidates.length) return { live: candidates, gone: [] }
    const checks = client.multi()
    for (const detail of details) checks.exists(detail)
    const present = await checks.execAsPipeline()
    return {
      live: candidates.filter((_, i) => Number(present[i]) === 1),
      gone: candidates.filter((_, i) => Number(present[i]) !== 1),
    }
  }

  /** Removes up to one page of records, entries and order members with them, in one transaction; resolves to how many existed. */
  async #removeBatch(owner: string, records: Removal[]): Promise<number> {
    if (records.length === 0) return 0
    const link = this.#link
    const multi = link.client
      .multi()
      .hDel(
        link.key(catalogKey(owner)),
        records.map((r) => r.requestId),
      )
      .unlink(records.map(({ keys }) => link.key(keys.detail)))
      .unlink(records.flatMap(({ keys }) => [link.key(keys.request), link.key(keys.response)]))
    const members = records.flatMap((r) => (r.member ? [r.member] : []))
    if (members.length > 0) multi.zRem(link.key(orderKey(owner)), members)
    const replies = await multi.exec()
    // UNLINK counts a detail key only when it was there and unexpired (once, however often it is named): exactly one
    // caller wins a race.
    return Number(replies[1])
  }
}

/** The removal of a catalog field, with its order member when its entry is known. */
function removal(owner: string): (field: { field: string; entry: CatalogEntry | undefined }) => Removal {
  return ({ field, entry }) => ({ requestId: field, keys: recordKeys(owner, field), ...(entry ? { member: orderMember(entry) } : {}) })
}
