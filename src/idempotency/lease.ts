import type { CallSpec } from '../call/call-spec.js'
import type { Runtime } from '../runtime.js'
import type { Fingerprint } from './fingerprint.js'
import { encodeKeyState } from './key-state.js'
import type { KeptAnswer } from './recent-answers.js'
import type { RunningCall } from './running-calls.js'
import { SharedResponse } from './shared-response.js'

/** How a call that may be repeated ended, for what is kept of it. */
export type LeaseOutcome =
  | { kind: 'answer'; answer: KeptAnswer }
  | { kind: 'stream'; status: number; contentType: string; requestId: string }
  | { kind: 'nothing' }

/** The store name of an owner's idempotency key. */
export const keyName = (digest: string): string => `key:${digest}`

/**
 * A call this request runs while others may join it. `end` keeps what was promised (the answer in memory for
 * SDK retries, in the store for a key) and frees the rest; `fail` hands the error to joiners and frees the key.
 */
export class CallLease {
  readonly shared: SharedResponse
  readonly #call: RunningCall
  /** Whether this call holds its key's claim in the store (so it must settle or free it). */
  claimed = false

  constructor(
    private readonly rt: Runtime,
    spec: CallSpec,
    fingerprint: Fingerprint,
    keyDigest: string | undefined,
  ) {
    this.shared = new SharedResponse(rt.options.limits.maxResponseBytes)
    this.#call = { requestId: spec.requestId, owner: spec.owner, fingerprint, keyDigest, shared: this.shared }
    rt.repeats.running.add(this.#call)
  }

  async end(outcome: LeaseOutcome): Promise<void> {
    const { owner, fingerprint, keyDigest } = this.#call
    const answer = outcome.kind === 'answer' && isSuccess(outcome.answer.status) ? outcome.answer : undefined
    // Kept before the call leaves the registry, so a retry always finds it in one place or the other.
    if (answer) this.rt.repeats.recent.set(fingerprint.id, answer)
    this.withdraw()
    if (keyDigest === undefined || !this.claimed) return
    const kept = answer ?? this.#streamAnswer(outcome)
    try {
      if (kept) {
        const state = encodeKeyState({ state: 'done', fingerprint: fingerprint.id, ...kept })
        await this.rt.store.setValue(owner, keyName(keyDigest), state, this.rt.options.idempotency.ttlMs)
      } else await this.rt.store.deleteValue(owner, keyName(keyDigest))
    } catch (error) {
      this.rt.options.logger.warn('model-gateway: the outcome of an idempotency key could not be stored', {
        requestId: this.#call.requestId,
        error: String(error),
      })
    }
  }

  async fail(error: unknown): Promise<void> {
    this.shared.fail(error)
    await this.end({ kind: 'nothing' })
  }

  /** Leaves the registry without touching the store: this request did not run the call. */
  withdraw(): void {
    this.rt.repeats.running.remove(this.#call)
  }

  #streamAnswer(outcome: LeaseOutcome): KeptAnswer | undefined {
    if (outcome.kind !== 'stream' || !isSuccess(outcome.status)) return undefined
    const body = this.shared.streamed()
    return body && { requestId: outcome.requestId, status: outcome.status, contentType: outcome.contentType, body }
  }
}

const isSuccess = (status: number) => status >= 200 && status < 300
