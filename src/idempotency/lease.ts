import type { CallSpec } from '../call/call-spec.js'
import type { Runtime } from '../runtime.js'
import type { Fingerprint } from './fingerprint.js'
import type { JoinableCall } from './joinable-calls.js'
import { encodeKeyState } from './key-state.js'
import type { KeptAnswer } from './recent-answers.js'
import { SharedResponse } from './shared-response.js'

/** How a call that may be repeated ended, for what is kept of it. */
export type LeaseOutcome =
  | { kind: 'answer'; answer: KeptAnswer }
  | { kind: 'stream'; status: number; contentType: string; requestId: string }
  | { kind: 'nothing' }

/** The store name of an owner's idempotency key. */
export const keyName = (digest: string): string => `key:${digest}`

/** The store name under which an SDK call whose client left says it is still running (then: its answer). */
export const runName = (fingerprintId: string): string => `run:${fingerprintId}`

/** A claim outlives the longest call it can stand for, so a process that died frees its keys in time. */
export const CLAIM_MARGIN_MS = 60_000

/**
 * A call this request runs while others may join it. `end` keeps what was promised (the answer in memory for
 * SDK retries, in the store for a key) and frees the rest; `fail` hands the error to joiners and frees the key.
 */
export class CallLease {
  readonly shared: SharedResponse
  readonly #call: JoinableCall
  /** Whether this call holds its key's claim in the store (so it must settle or free it). */
  claimed = false
  /** The running mark of an unkeyed call whose client left, once written (see `clientLeft`). */
  #marked: Promise<boolean> | undefined

  constructor(
    private readonly rt: Runtime,
    spec: CallSpec,
    fingerprint: Fingerprint,
    keyDigest: string | undefined,
  ) {
    this.shared = new SharedResponse(rt.options.limits.maxResponseBytes, rt.heldStreams)
    this.#call = { requestId: spec.requestId, owner: spec.owner, fingerprint, keyDigest, shared: this.shared }
    rt.repeats.joinable.add(this.#call)
  }

  /**
   * The client of an SDK call left while the call runs: its retry may land on another process, so the call says in
   * the store that it is running (one write, only now: the happy path writes nothing). `end` then leaves the answer there.
   */
  clientLeft(): void {
    if (this.#call.keyDigest !== undefined || this.#marked) return
    const { owner, fingerprint, requestId } = this.#call
    const mark = encodeKeyState({ state: 'running', fingerprint: fingerprint.id, requestId })
    this.#marked = this.rt.store
      .claimValue(owner, runName(fingerprint.id), mark, this.rt.options.timeouts.upstreamMs + CLAIM_MARGIN_MS)
      .then((existing) => existing === undefined)
      .catch(() => false)
  }

  async end(outcome: LeaseOutcome): Promise<void> {
    const { fingerprint, keyDigest } = this.#call
    const answer = outcome.kind === 'answer' && isSuccess(outcome.answer.status) ? outcome.answer : undefined
    // Kept before the call leaves the registry, so a retry always finds it in one place or the other.
    if (answer) this.rt.repeats.recent.set(fingerprint.id, answer)
    this.withdraw()
    if (this.#marked && (await this.#marked)) {
      // A stream's answer too: its record is kept after this, and a retry waiting elsewhere would otherwise find neither.
      const kept = answer ?? this.#streamAnswer(outcome)
      await this.#settle(runName(fingerprint.id), kept, this.rt.options.idempotency.retryWindowMs, 'a retried call')
    }
    if (keyDigest !== undefined && this.claimed) {
      await this.#settle(keyName(keyDigest), answer ?? this.#streamAnswer(outcome), this.rt.options.idempotency.ttlMs, 'an idempotency key')
    }
    // Out of the registry and settled: nobody joins it any more.
    this.shared.release()
  }

  async fail(error: unknown): Promise<void> {
    this.shared.fail(error)
    await this.end({ kind: 'nothing' })
  }

  /**
   * Replaces a claim (a key's, or an SDK call's running mark) with the answer for `ttlMs`, or removes it when there is
   * none: whoever waits on it elsewhere stops waiting. A store that refuses it gets it again once it is back.
   */
  async #settle(name: string, answer: KeptAnswer | undefined, ttlMs: number, what: string): Promise<void> {
    const { owner, fingerprint, requestId } = this.#call
    const state = answer && encodeKeyState({ state: 'done', fingerprint: fingerprint.id, ...answer })
    try {
      if (state) await this.rt.store.setValue(owner, name, state, ttlMs)
      else await this.rt.store.deleteValue(owner, name)
    } catch {
      // Held and written once the store is back: lost, the claim would stand for a call that is over, and a repeat
      // would wait on it, then run again once it expired.
      this.rt.pendingWrites.addValue(owner, name, state, ttlMs, what, requestId)
    }
  }

  /** Leaves the registry without touching the store: this request did not run the call. */
  withdraw(): void {
    this.rt.repeats.joinable.remove(this.#call)
  }

  #streamAnswer(outcome: LeaseOutcome): KeptAnswer | undefined {
    if (outcome.kind !== 'stream' || !isSuccess(outcome.status)) return undefined
    const body = this.shared.streamed()
    return body && { requestId: outcome.requestId, status: outcome.status, contentType: outcome.contentType, body }
  }
}

const isSuccess = (status: number) => status >= 200 && status < 300
