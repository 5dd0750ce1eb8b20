import { randomUUID } from 'node:crypto'
import type { CatalogPage } from './catalog.js'
import {
  type CatalogEntry,
  catalogKey,
  memberRequestId,
  orderKey,
  orderMember,
  parseCatalogEntry,
  type RecordKeys,
  recordKeys,
  trimLockKey,
} from './layout.js'
import type { Eviction } from './memory-catalog.js'
import type { RedisLink } from './redis-link.js'

/** Members read per ZRANGE and records removed per transaction, as the catalog's own pages (see redis-catalog.ts). */
const PAGE = 1000
/**
 * How long a process holds an owner's trim lock without renewing it (it renews it every batch): long enough for one
 * batch on a loaded Redis, short enough that a process that died mid-trim holds up the next trim no longer.
 */
const TRIM_LOCK_MS = 10_000

/** One page of catalog fields, each with its parsed entry (undefined when the value is not one). */
export type FieldPage = Array<{ field: string; entry: CatalogEntry | undefined }>

/** A record to remove: its order member too, when its entry is known (otherwise a later read drops the member). */
export interface Removal {
  requestId: string
  keys: RecordKeys
  member?: string
}

/** A catalog field's value parsed, when it is an entry of that request id. */
export function parseField(field: string, value: unknown): CatalogEntry | undefined {
  if (value === null || value === undefined) return undefined
  try {
    const entry = parseCatalogEntry(JSON.parse(String(value)))
    return entry && entry.request_id === field ? entry : undefined
  } catch {
    return undefined
  }
}

/** A trim of an owner's oldest records starting, or ending with how many it removed. */
export interface Trim {
  owner: string
  phase: 'start' | 'end'
  evicted: number
}

/** What the order needs from the catalog it sits beside. */
export interface OrderOptions {
  maxRecords: number
  onEvict: (eviction: Eviction) => void
  onTrim: (trim: Trim) => void
  onError: (error: unknown) => void
  /** Walks the owner's catalog hash page by page. */
  walk: (owner: string, step: (() => void) | undefined, visit: (page: FieldPage) => Promise<void> | void) => Promise<void>
  /** Removes records, entries and members, in one transaction; resolves to how many existed. */
  removeBatch: (owner: string, records: Removal[]) => Promise<number>
}

/**
 * The order of an owner's Redis catalog: a sorted set `…ord:{owner}` beside the hash, every score 0 and every member
 * `<created_at>:<request_id>` (layout.ts), so byte order is the list's order. A put adds the member in the same
 * transaction as the entry and a removal takes it with the entry, so any number of processes keep it in step; a
 * catalog written before the set existed (or whose set Redis evicted) has fewer members than entries, and is
 * re-indexed from the hash the first time it is paged or trimmed. A member left without its entry is dropped when read.
 *
 * With it, a page of the list is one ZRANGE … BYLEX REV LIMIT plus one HMGET, whatever the catalog's size, and a
 * trim reads the owner's oldest members instead of scanning and sorting the whole catalog.
 */
export class OwnerOrder {
  readonly #link: RedisLink
  readonly #options: OrderOptions
  /**
   * The trim running per owner in this process; a write that finds the owner over its cap while it runs marks it to
   * run once more, so a write that landed after its last check is trimmed too.
   */
  readonly #trims = new Map<string, { again: boolean }>()

  constructor(link: RedisLink, options: OrderOptions) {
    this.#link = link
    this.#options = options
  }

  /** Up to `limit` live entries newest first, after the entry `after`; undefined when `after` is not a live entry. */
  async page(
    owner: string,
    { limit, after }: { limit: number; after?: string },
    step: (() => void) | undefined,
    liveOf: (entries: CatalogEntry[]) => Promise<{ live: CatalogEntry[]; gone: CatalogEntry[] }>,
  ): Promise<CatalogPage | undefined> {
    const client = this.#link.client
    await this.#complete(owner, step)
    let from = '+'
    if (after !== undefined) {
      const entry = parseField(after, await client.hGet(this.#link.key(catalogKey(owner)), after))
      if (!entry || entry.expires_at <= Date.now()) return undefined
      from = `(${orderMember(entry)}`
    }
    const order = this.#link.key(orderKey(owner))
    const entries: CatalogEntry[] = []
    // One more than asked, to tell whether more follow.
    for (;;) {
      const want = Math.min(PAGE, limit + 1 - entries.length)
      const members = (await client.zRange(order, from, '-', { BY: 'LEX', REV: true, LIMIT: { offset: 0, count: want } })).map(String)
      entries.push(...(await this.#resolve(owner, members, liveOf)))
      step?.()
      if (members.length < want || entries.length > limit) break
      from = `(${members.at(-1)}`
    }
    return { entries: entries.slice(0, limit), hasMore: entries.length > limit }
  }

  /**
   * Brings the owner back to its cap, one trim per owner at a time: in this process a write that finds a trim running
   * marks it to run once more (so its record is trimmed too) and goes on, and across processes a short Redis lock
   * lets one trim while the others go on. The write that started the trim waits for its first round only; rounds asked
   * for meanwhile run after it, so no write waits on a trim that steady traffic keeps going. `incomplete`: the order
   * set has fewer members than the catalog, so it is re-indexed first. Never rejects (errors go to `onError`): the
   * write that asked was taken either way.
   */
  trim(owner: string, incomplete: boolean): Promise<void> {
    const running = this.#trims.get(owner)
    if (running) {
      running.again = true
      return Promise.resolve()
    }
    const trim = { again: false }
    this.#trims.set(owner, trim)
    const first = this.#trimOnce(owner, incomplete).catch(this.#options.onError)
    void first.then(async () => {
      try {
        while (trim.again) {
          trim.again = false
          await this.#trimOnce(owner, false).catch(this.#options.onError)
        }
      } finally {
        // In the same turn as the last check: a write marking the trim from now on starts a new one.
        this.#trims.delete(owner)
      }
    })
    return first
  }

  async #trimOnce(owner: string, incomplete: boolean): Promise<void> {
    const client = this.#link.client
    const lock = this.#link.key(trimLockKey(owner))
    const token = randomUUID()
    const held = await client.set(lock, token, { condition: 'NX', expiration: { type: 'PX', value: TRIM_LOCK_MS } })
    if (held === null) return
    this.#options.onTrim({ owner, phase: 'start', evicted: 0 })
    const catalog = this.#link.key(catalogKey(owner))
    const order = this.#link.key(orderKey(owner))
    const evicted: string[] = []
    try {
      if (incomplete) await this.#reindex(owner, undefined)
      // Batches of at most a page, each the oldest members past the cap: bounded work per command however far over it is.
      for (;;) {
        const [listed] = await client.multi().hLen(catalog).pExpire(lock, TRIM_LOCK_MS).execAsPipeline()
        const excess = Number(listed) - this.#options.maxRecords
        if (excess <= 0) break
        const oldest = (await client.zRange(order, '-', '+', { BY: 'LEX', LIMIT: { offset: 0, count: Math.min(excess, PAGE) } })).map(
          String,
        )
        if (oldest.length === 0) break
        const removals = oldest.map((member) => {
          const requestId = memberRequestId(member)
          return { requestId, keys: recordKeys(owner, requestId), member }
        })
        await this.#options.removeBatch(owner, removals)
        evicted.push(...removals.map((r) => r.requestId))
      }
    } finally {
      if (evicted.length > 0) this.#options.onEvict({ owner, requestIds: evicted, reason: 'owner_record_limit' })
      this.#options.onTrim({ owner, phase: 'end', evicted: evicted.length })
      // Released only when still ours: a lock that expired mid-trim may be another process's by now.
      if ((await client.get(lock).catch(() => undefined)) === token) await client.del(lock).catch(this.#options.onError)
    }
  }

  /** Re-indexes a catalog whose order set has fewer members than it has entries. */
  async #complete(owner: string, step: (() => void) | undefined): Promise<void> {
    const client = this.#link.client
    const [listed, ordered] = await client
      .multi()
      .hLen(this.#link.key(catalogKey(owner)))
      .zCard(this.#link.key(orderKey(owner)))
      .execAsPipeline()
    if (Number(ordered) < Number(listed)) await this.#reindex(owner, step)
  }

  /** Adds every entry's member (adding one already there changes nothing), then gives the set the catalog's expiry. */
  async #reindex(owner: string, step: (() => void) | undefined): Promise<void> {
    const client = this.#link.client
    const catalog = this.#link.key(catalogKey(owner))
    const order = this.#link.key(orderKey(owner))
    await this.#options.walk(owner, step, async (page) => {
      const members = page.flatMap(({ entry }) => (entry ? [{ score: 0, value: orderMember(entry) }] : []))
      if (members.length > 0) await client.multi().zAdd(order, members).exec()
      // A malformed entry is never listed and has no member: dropped here, or every read would re-index again.
      const malformed = page.flatMap(({ field, entry }) => (entry ? [] : [{ requestId: field, keys: recordKeys(owner, field) }]))
      if (malformed.length > 0) await this.#options.removeBatch(owner, malformed)
    })
    const [ttl] = await client.multi().pTTL(catalog).exec()
    if (Number(ttl) > 0) await client.multi().pExpire(order, Number(ttl)).exec()
  }

  /**
   * The live entries of a page of members, in the members' order. Stale entries (expired, malformed, detail gone) are
   * removed with their records; members whose entry is gone or was written with another time are dropped.
   */
  async #resolve(
    owner: string,
    members: string[],
    liveOf: (entries: CatalogEntry[]) => Promise<{ live: CatalogEntry[]; gone: CatalogEntry[] }>,
  ): Promise<CatalogEntry[]> {
    if (members.length === 0) return []
    const client = this.#link.client
    const ids = members.map(memberRequestId)
    const values = await client.hmGet(this.#link.key(catalogKey(owner)), ids)
    const now = Date.now()
    const orphans: string[] = []
    const stale: Removal[] = []
    const candidates: CatalogEntry[] = []
    members.forEach((member, i) => {
      const requestId = ids[i] as string
      const value = values[i]
      const entry = parseField(requestId, value)
      if (value === null || value === undefined || (entry && orderMember(entry) !== member)) orphans.push(member)
      else if (!entry || entry.expires_at <= now) stale.push({ requestId, keys: recordKeys(owner, requestId), member })
      else candidates.push(entry)
    })
    const { live, gone } = await liveOf(candidates)
    for (const entry of gone)
      stale.push({ requestId: entry.request_id, keys: recordKeys(owner, entry.request_id), member: orderMember(entry) })
    if (stale.length > 0) await this.#options.removeBatch(owner, stale)
    if (orphans.length > 0) await client.zRem(this.#link.key(orderKey(owner)), orphans)
    return live
  }
}
