// Counters whose store is known down answer at once: without this, every call of an owner with limits waited for a
// Redis that had already failed (up to 2 s each), for as long as it stayed down.
import { GatewayError, isGatewayError } from '../errors.js'
import type { OwnerUsage } from '../types.js'
import type { CheckResult, CounterLimits, Counters, Reservation } from './counters.js'

/** How often, while the store is down, it is asked again (in the background, by one read) whether it is back. */
const PROBE_MS = 1000
/** The owner the probe reads: a read changes nothing, and no owner id (32 hex characters) looks like it. */
const PROBE_OWNER = 'model-gateway-probe'

/**
 * Wraps the counters of a shared store: once a step fails with `store_unavailable`, every step fails at once (the
 * ledger then fails open or closed, as `limits.failClosed` says) until a probe, at most one per second and only
 * while calls come, finds the store answering again.
 */
export class DownFastCounters implements Counters {
  readonly #inner: Counters
  /** Whether the store was found down and no probe has found it back yet. */
  #isDown = false
  #nextProbe = 0
  /** The last charge promise of the inner counters, and what this handed out for it. */
  #lastSent: Promise<void> | undefined
  #lastWatched: Promise<void> | undefined
  #probing = false

  constructor(inner: Counters) {
    this.#inner = inner
  }

  check(owner: string, limits: CounterLimits, reserve?: Reservation): Promise<CheckResult> {
    return this.#isDown ? this.#refuse() : this.#watch(this.#inner.check(owner, limits, reserve))
  }

  charge(owner: string, tokens: number, cost: number): Promise<void> | undefined {
    if (this.#isDown) return this.#refuse()
    const sent = this.#inner.charge(owner, tokens, cost)
    if (sent === undefined) return undefined
    // Charges sent together share one promise: watched once, so they still share one here.
    if (sent !== this.#lastSent) {
      this.#lastSent = sent
      this.#lastWatched = this.#watch(sent)
    }
    return this.#lastWatched
  }

  usage(owner: string): Promise<OwnerUsage> {
    return this.#isDown ? this.#refuse() : this.#watch(this.#inner.usage(owner))
  }

  #refuse(): Promise<never> {
    this.#probe()
    return Promise.reject(
      new GatewayError('store_unavailable', 'The rate-limit store is down; try again shortly.', { retryAfterSeconds: 1 }),
    )
  }

  /** The step's promise, and the store marked down when it fails so. */
  #watch<T>(step: Promise<T>): Promise<T> {
    return step.then(undefined, (error: unknown) => {
      if (isGatewayError(error) && error.code === 'store_unavailable') this.#down()
      throw error
    })
  }

  #down(): void {
    this.#isDown = true
    this.#nextProbe = Date.now() + PROBE_MS
  }

  #probe(): void {
    if (this.#probing || Date.now() < this.#nextProbe) return
    this.#probing = true
    this.#inner.usage(PROBE_OWNER).then(
      () => {
        this.#isDown = false
        this.#probing = false
      },
      () => {
        this.#nextProbe = Date.now() + PROBE_MS
        this.#probing = false
      },
    )
  }
}
