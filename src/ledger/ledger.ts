// The ledger: each owner's limits checked before a call goes upstream, and its usage charged when the call ends.
import type Keyv from 'keyv'
import { RATE_LIMIT_FAMILIES, type RateLimitFigures } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import { isRedisKeyv } from '../store/redis-link.js'
import type { GatewayLogger, OwnerUsage } from '../types.js'
import { type CheckResult, type CounterLimits, type Counters, MemoryCounters, NO_RESERVATION, type Reservation } from './counters.js'
import { DownFastCounters } from './down-fast.js'
import { answeredLimits, type ResolvedOwnerLimits } from './limits.js'
import { RedisCounters } from './redis-counters.js'

/** How often a failing store is reported: one warn line per interval, with a count of the failures in between. */
const WARN_INTERVAL_MS = 10_000

/** Options of a ledger. */
export interface LedgerOptions {
  owners: ResolvedOwnerLimits
  failClosed: boolean
  /** Whether any model has a price: without one, a cost limit a function answers can never be reached. */
  priced: boolean
  /** The gateway's store: a Keyv on Redis shares the counters across processes; anything else keeps them here. */
  store: Keyv | undefined
  logger: GatewayLogger
}

/** What `admit` hands back for the call's end: whom to charge, and the limits the check saw for the answer's head. */
export interface LedgerEntry {
  owner: string
  /** What the admission added to the owner's windows ahead of the call's use; its settlement counts from it. */
  reserved: Reservation
  /** Undefined when the check could not be made (a store down, failing open): there is nothing true to tell. */
  figures: RateLimitFigures | undefined
}

/** One gateway's ledger over its counters. */
export class Ledger {
  readonly #owners: ResolvedOwnerLimits
  readonly #failClosed: boolean
  readonly #counters: Counters
  readonly #warn: (what: string, error: unknown) => void
  readonly #pending = new Set<Promise<void>>()
  /** The promise of the last charge sent: the next charge of the same batch shares it. */
  #lastSent: Promise<void> | undefined
  readonly #priced: boolean
  readonly #logger: GatewayLogger
  /** Whether the host was told that a cost limit its function answered cannot be reached: once per gateway. */
  #toldUnpriced = false

  constructor(options: LedgerOptions) {
    this.#owners = options.owners
    this.#failClosed = options.failClosed
    this.#priced = options.priced
    this.#logger = options.logger
    this.#warn = rateLimitedWarn(options.logger, options.failClosed)
    this.#counters =
      options.store && isRedisKeyv(options.store)
        ? new DownFastCounters(new RedisCounters(options.store, (error) => this.#warn('connection', error)))
        : new MemoryCounters()
  }

  /**
   * Checks the owner's limits before its call goes upstream and counts the call. Resolves the entry to charge at
   * the call's end, or undefined when the owner has no limits; rejects with the 429 (or, failing closed, the 503).
   */
  async admit(owner: string, reserve: Reservation = NO_RESERVATION): Promise<LedgerEntry | undefined> {
    const found = this.#limitsOf(owner)
    // Fixed limits, or a function that answered at once: no promise turn spent on them.
    const limits = found instanceof Promise ? await found : found
    if (limits === undefined) return undefined
    let result: CheckResult
    try {
      result = await this.#counters.check(owner, limits, reserve)
    } catch (error) {
      this.#warn('check', error)
      if (this.#failClosed) {
        throw new GatewayError('store_unavailable', 'The rate limits cannot be checked now; try again shortly.', { retryAfterSeconds: 1 })
      }
      return { owner, figures: undefined, reserved: NO_RESERVATION }
    }
    const figures = limitFigures(result, limits)
    if (result.over !== undefined) throw overLimit(result, figures)
    return { owner, figures, reserved: reserve }
  }

  /**
   * Settles a finished call: its owner's windows end up charged `tokens` and `cost` for it, whatever its admission
   * reserved. Never rejects (a failure is a warn line).
   */
  settle(entry: LedgerEntry, tokens: number, cost: number): void {
    this.#add(entry, tokens - entry.reserved.tokens, cost - entry.reserved.cost)
  }

  #add(entry: LedgerEntry, tokens: number, cost: number): void {
    if (tokens === 0 && cost === 0) return
    const sent = this.#counters.charge(entry.owner, tokens, cost)
    // Counted at once (in memory): nothing to wait for or to warn of. Charges sent together share one promise:
    // watched once, however many calls it carries.
    if (sent === undefined || sent === this.#lastSent) return
    this.#lastSent = sent
    const charged = sent.then(undefined, (error: unknown) => this.#warn('charge', error))
    this.#pending.add(charged)
    void charged.then(() => this.#pending.delete(charged))
  }

  /** What the owner used in its current windows. */
  usage(owner: string): Promise<OwnerUsage> {
    return this.#counters.usage(owner)
  }

  /** Resolves once every charge sent has landed or failed (for `close()`). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending)
  }

  #limitsOf(owner: string): CounterLimits | undefined | Promise<CounterLimits | undefined> {
    const owners = this.#owners
    if ('fixed' in owners) return owners.fixed
    const answer = owners.of(owner)
    // A sync function costs no promise turn.
    return answer instanceof Promise ? answer.then((value) => this.#answered(owner, value)) : this.#answered(owner, answer)
  }

  /** The limits a function answered, checked; a cost limit that nothing priced can reach is told of once. */
  #answered(owner: string, answer: unknown): CounterLimits | undefined {
    const limits = answeredLimits(answer)
    if (limits !== undefined && limits.cost >= 0 && !this.#priced && !this.#toldUnpriced) {
      this.#toldUnpriced = true
      this.#logger.warn(
        'model-gateway: limits.owners gave a costPerDay, but no model has a price: every call costs nothing, so it is never reached',
        {
          owner,
        },
      )
    }
    return limits
  }
}

/** The figures of a check: each limit the owner has, what is left of it after this call was counted, and its reset. */
function limitFigures(result: CheckResult, limits: CounterLimits): RateLimitFigures {
  const figures: RateLimitFigures = { resetMs: result.minuteResetMs, resetAt: Date.now() + result.minuteResetMs }
  if (limits.requests >= 0) figures.requests = { limit: limits.requests, remaining: Math.max(0, limits.requests - result.requests) }
  if (limits.tokens >= 0) figures.tokens = { limit: limits.tokens, remaining: Math.max(0, limits.tokens - result.tokens) }
  return figures
}

/**
 * The 429 of a reached limit: `retry-after` when its window starts anew, and the rate-limit headers in both families
 * of names (a client that reached a limit is told in whichever names it reads).
 */
function overLimit(result: CheckResult, figures: RateLimitFigures): GatewayError {
  const resetMs = result.over === 'cost' ? result.dayResetMs : result.minuteResetMs
  const what = { requests: 'requests per minute', tokens: 'tokens per minute', cost: 'cost per day' }[result.over ?? 'requests']
  return new GatewayError('rate_limit_exceeded', `Rate limit reached: ${what}. Try again in ${Math.ceil(resetMs / 1000)} s.`, {
    retryAfterSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    headers: Object.assign({}, ...RATE_LIMIT_FAMILIES.map((family) => family.headers(figures))),
  })
}

/** A warn line for a store the ledger cannot reach: the first, then one per interval with the count skipped. */
function rateLimitedWarn(logger: GatewayLogger, failClosed: boolean): (what: string, error: unknown) => void {
  const line = failClosed
    ? 'model-gateway: the rate-limit store failed; calls are refused until it answers'
    : 'model-gateway: the rate-limit store failed; calls go on unmetered'
  let last = Number.NEGATIVE_INFINITY
  let suppressed = 0
  return (what, error) => {
    const now = Date.now()
    if (now - last < WARN_INTERVAL_MS) {
      suppressed++
      return
    }
    last = now
    logger.warn(line, {
      step: what,
      error: String((error as { message?: unknown })?.message ?? error),
      ...(suppressed > 0 ? { suppressed } : {}),
    })
    suppressed = 0
  }
}
