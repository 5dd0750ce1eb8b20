import type { Failure } from './attempt.js'
import { RecoveringFetchError } from './errors.js'
import { atBase, type Base, type ClientConfig, type RecoveringFetchStep } from './options.js'
import type { ModelCall } from './request.js'
import { backoffMs, sleep } from './wait.js'

/** How long a base that failed is passed over as the first choice of later calls. */
const REST_MS = 30_000

/**
 * Which bases failed lately, shared by the calls of one recovering fetch: a call starts at the base it addressed
 * unless that one failed in the last `REST_MS`, so a main address that is down costs later calls nothing.
 */
export class BaseHealth {
  readonly #failedAt: number[]

  constructor(count: number) {
    this.#failedAt = new Array(count).fill(Number.NEGATIVE_INFINITY)
  }

  failed(base: number): void {
    this.#failedAt[base] = Date.now()
  }

  ok(base: number): void {
    this.#failedAt[base] = Number.NEGATIVE_INFINITY
  }

  /** The first base from `start` on (in order, wrapping) that has not failed lately; `start` when all have. */
  firstChoice(start: number): number {
    const now = Date.now()
    const count = this.#failedAt.length
    for (let step = 0; step < count; step++) {
      const base = (start + step) % count
      if (now - (this.#failedAt[base] as number) >= REST_MS) return base
    }
    return start
  }
}

/** One model call across its attempts and resumes: what it sent, what it saw, and its budget of failures. */
export class CallRun {
  /** Requests sent so far (attempts and resumes). */
  sent = 0
  #failures = 0
  #requestId: string | undefined
  #lastRequestId: string | undefined
  #lastStatus: number | undefined

  constructor(
    readonly cfg: ClientConfig,
    readonly call: ModelCall,
    readonly health: BaseHealth,
  ) {}

  get bases(): readonly Base[] {
    return this.cfg.bases
  }

  /** The base after `base`, wrapping. */
  next(base: number): number {
    return (base + 1) % this.cfg.bases.length
  }

  /** Tells `onEvent` about a step of this call. */
  emit(step: RecoveringFetchStep): void {
    this.cfg.emit({ ...step, idempotencyKey: this.call.idempotencyKey })
  }

  /** The model call's URL at `base`. */
  urlAt(base: number): string {
    return atBase(this.cfg.bases[base] as Base, this.call.rest)
  }

  /** Notes an answer's head: its status and request id (a 2xx one is the id of the call's answer). */
  saw(response: Response): string | undefined {
    const requestId = response.headers.get('x-request-id') ?? undefined
    this.#lastStatus = response.status
    if (requestId) {
      this.#lastRequestId = requestId
      if (response.ok) this.#requestId = requestId
    }
    return requestId
  }

  /**
   * Counts a failed request from `from`; throws the call's final error when the budget is spent, else waits what the
   * answer asked (or a backoff when the next try returns to a base already tried) and tells `onEvent`.
   */
  async failed(from: number, to: number, failure: Failure): Promise<void> {
    this.#failures++
    if (failure.unhealthy) this.health.failed(from)
    if (failure.status === undefined) this.#lastStatus = undefined
    if (this.#failures >= this.cfg.attempts) {
      const what = failure.status === undefined ? failure.reason : `status ${failure.status}`
      throw this.giveUp(`The model call failed on every attempt (${this.sent} requests; the last: ${what}).`, failure.error)
    }
    const count = this.cfg.bases.length
    const waitMs = failure.waitMs ?? (this.#failures % count === 0 ? backoffMs(this.#failures / count) : 0)
    this.emit({
      type: 'failover',
      attempt: this.sent,
      from: (this.cfg.bases[from] as Base).href,
      to: (this.cfg.bases[to] as Base).href,
      reason: failure.reason,
      ...(failure.status === undefined ? {} : { status: failure.status }),
      waitMs,
    })
    await sleep(waitMs, this.call.signal)
  }

  /** The error the call ends with, carrying what the Recoveries API needs. */
  giveUp(message: string, cause?: unknown): RecoveringFetchError {
    return new RecoveringFetchError(message, {
      requestId: this.#requestId ?? this.#lastRequestId,
      idempotencyKey: this.call.idempotencyKey,
      attempts: this.sent,
      status: this.#lastStatus,
      cause,
    })
  }
}
