// Each owner's counters: requests and tokens in the current minute, cost in the current UTC day (fixed windows, so
// every process that shares a store counts the same calls in the same window). The memory counters live in this
// process; the Redis ones (redis-counters.ts) are shared by every process on that Redis.
import type { OwnerUsage } from '../types.js'

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

/** One owner's limits in the counters' units; -1 is no limit. */
export interface CounterLimits {
  requests: number
  tokens: number
  /** Nano-dollars. */
  cost: number
}

/** Which limit a check found reached, or undefined when the call may go. */
export type LimitName = 'requests' | 'tokens' | 'cost'

/** What a check saw: the counts after it (a call let through is counted), and when each window ends. */
export interface CheckResult extends OwnerUsage {
  over: LimitName | undefined
  /** Ms until the minute window (requests, tokens) starts anew. */
  minuteResetMs: number
  /** Ms until the day window (cost) starts anew. */
  dayResetMs: number
}

/** Tokens and nano-dollars held for a call from its admission until it settles. */
export interface Reservation {
  tokens: number
  cost: number
}

/** Nothing held. */
export const NO_RESERVATION: Readonly<Reservation> = Object.freeze({ tokens: 0, cost: 0 })

/** Where the counters are kept; every method is one atomic step of the backing store. */
export interface Counters {
  /**
   * Checks an owner's counts against its limits and, when none is reached, counts one request and adds `reserve`
   * (the result's counts are those the check saw, before the reservation).
   */
  check(owner: string, limits: CounterLimits, reserve?: Reservation): Promise<CheckResult>
  /**
   * Adds a finished call's tokens and cost (nano-dollars) to the owner's windows; negative amounts give back what a
   * reservation held beyond the call's use (a count never goes below 0). Undefined when it took at once (in memory).
   */
  charge(owner: string, tokens: number, cost: number): Promise<void> | undefined
  /** The owner's counts in the current windows. */
  usage(owner: string): Promise<OwnerUsage>
}

interface Windows {
  minute: number
  requests: number
  tokens: number
  day: number
  cost: number
}

/** Past this many owners, the memory counters drop those whose day is over. */
const SWEEP_AT = 10_000

/** The counters of one process: a Map, each step synchronous (so atomic), answered with a settled promise. */
export class MemoryCounters implements Counters {
  readonly #owners = new Map<string, Windows>()
  readonly #now: () => number
  /** The day of the last sweep: within one day nothing is over, so one sweep a day is enough (never one per owner). */
  #sweptDay = Number.NaN

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  #current(owner: string, now: number): Windows {
    const minute = Math.floor(now / MINUTE_MS)
    const day = Math.floor(now / DAY_MS)
    let windows = this.#owners.get(owner)
    if (!windows) {
      if (this.#owners.size >= SWEEP_AT && day !== this.#sweptDay) this.#sweep(day)
      windows = { minute, requests: 0, tokens: 0, day, cost: 0 }
      this.#owners.set(owner, windows)
    }
    if (windows.minute !== minute) {
      windows.minute = minute
      windows.requests = 0
      windows.tokens = 0
    }
    if (windows.day !== day) {
      windows.day = day
      windows.cost = 0
    }
    return windows
  }

  #sweep(day: number): void {
    this.#sweptDay = day
    for (const [owner, windows] of this.#owners) if (windows.day !== day) this.#owners.delete(owner)
  }

  check(owner: string, limits: CounterLimits, reserve: Reservation = NO_RESERVATION): Promise<CheckResult> {
    const now = this.#now()
    const w = this.#current(owner, now)
    const over = overLimit(w.requests, w.tokens, w.cost, limits)
    const result: CheckResult = {
      over,
      requests: over === undefined ? w.requests + 1 : w.requests,
      tokens: w.tokens,
      cost: w.cost,
      minuteResetMs: MINUTE_MS - (now % MINUTE_MS),
      dayResetMs: DAY_MS - (now % DAY_MS),
    }
    if (over === undefined) {
      w.requests++
      w.tokens += reserve.tokens
      w.cost += reserve.cost
    }
    return Promise.resolve(result)
  }

  charge(owner: string, tokens: number, cost: number): undefined {
    const w = this.#current(owner, this.#now())
    w.tokens = Math.max(0, w.tokens + tokens)
    w.cost = Math.max(0, w.cost + cost)
  }

  usage(owner: string): Promise<OwnerUsage> {
    const w = this.#owners.get(owner)
    if (!w) return Promise.resolve({ requests: 0, tokens: 0, cost: 0 })
    const now = this.#now()
    const sameMinute = w.minute === Math.floor(now / MINUTE_MS)
    const sameDay = w.day === Math.floor(now / DAY_MS)
    return Promise.resolve({
      requests: sameMinute ? w.requests : 0,
      tokens: sameMinute ? w.tokens : 0,
      cost: sameDay ? w.cost : 0,
    })
  }
}

/** The limit an owner's counts have reached, cost first (its window is the longest), then requests, then tokens. */
export function overLimit(requests: number, tokens: number, cost: number, limits: CounterLimits): LimitName | undefined {
  if (limits.cost >= 0 && cost >= limits.cost) return 'cost'
  if (limits.requests >= 0 && requests >= limits.requests) return 'requests'
  if (limits.tokens >= 0 && tokens >= limits.tokens) return 'tokens'
  return undefined
}
