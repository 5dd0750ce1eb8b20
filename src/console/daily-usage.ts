// Per-owner usage by UTC day (requests, tokens, cost), kept while the console is on, for every owner (limits or
// not), for `console.usageDays` days. In this process by default; in Redis when the gateway's store is on Redis, one
// hash per owner changed by HINCRBY (atomic across processes), and one hash of the owners seen, for the admin view.
import type Keyv from 'keyv'
import { DAY_MS } from '../ledger/counters.js'
import { guarded } from '../store/guard.js'
import { isRedisKeyv, RedisLink } from '../store/redis-link.js'

/** One owner's totals of one UTC day. */
export interface DayTotals {
  /** `YYYY-MM-DD`, UTC. */
  day: string
  requests: number
  tokens: number
  /** Nano-dollars. */
  cost: number
}

/** Where the per-day totals live. */
export interface DailyUsage {
  /** Adds one finished call; never rejects (a failure is told to `onError`). */
  add(owner: string, tokens: number, cost: number): void
  /** The owner's days with any use, oldest first, within the kept days. */
  days(owner: string): Promise<DayTotals[]>
  /** The owners with any use within the kept days. */
  owners(): Promise<string[]>
}

/** The UTC day number of a time. */
const dayOf = (ms: number) => Math.floor(ms / DAY_MS)
/** A day number as `YYYY-MM-DD`. */
const dayName = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10)

/** Past this many owners, the memory totals drop those with no use in the kept days. */
const SWEEP_AT = 10_000

/** The totals in this process: a Map of owners to their days. */
export class MemoryDailyUsage implements DailyUsage {
  readonly #owners = new Map<string, Map<number, DayTotals>>()
  readonly #days: number
  readonly #now: () => number

  constructor(days: number, now: () => number = Date.now) {
    this.#days = days
    this.#now = now
  }

  add(owner: string, tokens: number, cost: number): void {
    const today = dayOf(this.#now())
    let days = this.#owners.get(owner)
    if (!days) {
      if (this.#owners.size >= SWEEP_AT) this.#sweep(today)
      days = new Map()
      this.#owners.set(owner, days)
    }
    let totals = days.get(today)
    if (!totals) {
      for (const day of days.keys()) if (day <= today - this.#days) days.delete(day)
      totals = { day: dayName(today), requests: 0, tokens: 0, cost: 0 }
      days.set(today, totals)
    }
    totals.requests++
    totals.tokens += tokens
    totals.cost += cost
  }

  days(owner: string): Promise<DayTotals[]> {
    const first = dayOf(this.#now()) - this.#days + 1
    const days = this.#owners.get(owner)
    const kept = days ? [...days].filter(([day]) => day >= first).sort(([a], [b]) => a - b) : []
    return Promise.resolve(kept.map(([, totals]) => ({ ...totals })))
  }

  owners(): Promise<string[]> {
    const first = dayOf(this.#now()) - this.#days + 1
    return Promise.resolve([...this.#owners].filter(([, days]) => [...days.keys()].some((day) => day >= first)).map(([owner]) => owner))
  }

  #sweep(today: number): void {
    for (const [owner, days] of this.#owners) if (![...days.keys()].some((day) => day > today - this.#days)) this.#owners.delete(owner)
  }
}

/** The commands of a node-redis v5 client (or cluster) these totals use. */
interface UsageClient {
  hGetAll(key: string): Promise<Record<string, string>>
  multi(): {
    hIncrBy(key: string, field: string, by: number): unknown
    hSet(key: string, field: string, value: string): unknown
    pExpire(key: string, ms: number): unknown
    exec(): Promise<unknown[]>
  }
  hDel(key: string, fields: string[]): Promise<number>
}

/** The longest a step waits for Redis. */
const STEP_TIMEOUT_MS = 2000

/** The totals in Redis: `console-usage:{owner}` holds `<day>:r|t|c`, `console-usage-owners` each owner's last day. */
export class RedisDailyUsage implements DailyUsage {
  readonly #link: RedisLink
  readonly #days: number
  readonly #onError: (error: unknown) => void

  constructor(keyv: Keyv, days: number, onError: (error: unknown) => void) {
    this.#link = new RedisLink(keyv, { waitMs: STEP_TIMEOUT_MS, onError })
    this.#days = days
    this.#onError = onError
  }

  get #client(): UsageClient {
    return this.#link.client as unknown as UsageClient
  }

  add(owner: string, tokens: number, cost: number): void {
    const today = dayOf(Date.now())
    const key = this.#link.key(`console-usage:{${owner}}`)
    const ownersKey = this.#link.key('console-usage-owners')
    const keepMs = (this.#days + 1) * DAY_MS
    void guarded('console usage add', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      const multi = this.#client.multi()
      multi.hIncrBy(key, `${today}:r`, 1)
      if (tokens !== 0) multi.hIncrBy(key, `${today}:t`, tokens)
      if (cost !== 0) multi.hIncrBy(key, `${today}:c`, cost)
      multi.pExpire(key, keepMs)
      multi.hSet(ownersKey, owner, String(today))
      multi.pExpire(ownersKey, keepMs)
      await multi.exec()
    }).catch(this.#onError)
  }

  async days(owner: string): Promise<DayTotals[]> {
    const key = this.#link.key(`console-usage:{${owner}}`)
    const fields = await guarded('console usage read', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      return this.#client.hGetAll(key)
    })
    const first = dayOf(Date.now()) - this.#days + 1
    const byDay = new Map<number, DayTotals>()
    const stale: string[] = []
    for (const [field, value] of Object.entries(fields)) {
      const [dayText, which] = field.split(':')
      const day = Number(dayText)
      if (!(day >= first)) {
        stale.push(field)
        continue
      }
      let totals = byDay.get(day)
      if (!totals) {
        totals = { day: dayName(day), requests: 0, tokens: 0, cost: 0 }
        byDay.set(day, totals)
      }
      const n = Number(value)
      if (which === 'r') totals.requests = n
      else if (which === 't') totals.tokens = n
      else if (which === 'c') totals.cost = n
    }
    // Days past the kept ones go when read: the hash lives on while its owner keeps calling.
    if (stale.length > 0) void this.#client.hDel(key, stale).catch(this.#onError)
    return [...byDay].sort(([a], [b]) => a - b).map(([, totals]) => totals)
  }

  async owners(): Promise<string[]> {
    const key = this.#link.key('console-usage-owners')
    const fields = await guarded('console usage owners', STEP_TIMEOUT_MS, async () => {
      await this.#link.ready()
      return this.#client.hGetAll(key)
    })
    const first = dayOf(Date.now()) - this.#days + 1
    return Object.entries(fields)
      .filter(([, day]) => Number(day) >= first)
      .map(([owner]) => owner)
  }
}

/** The totals for a gateway: in Redis when its store is, else in this process. */
export function createDailyUsage(store: Keyv | undefined, days: number, onError: (error: unknown) => void): DailyUsage {
  return store && isRedisKeyv(store) ? new RedisDailyUsage(store, days, onError) : new MemoryDailyUsage(days)
}
