import type { Fingerprint } from './fingerprint.js'
import type { SharedResponse } from './shared-response.js'

/** A call running in this process that a retry or a repeated key can join. */
export interface JoinableCall {
  requestId: string
  owner: string
  fingerprint: Fingerprint
  /** The digest of its `Idempotency-Key`, if it has one. */
  keyDigest: string | undefined
  shared: SharedResponse
}

/**
 * The calls of this process that may be joined, by fingerprint and by idempotency key (the in-flight map of
 * request coalescing). Only calls that can be repeated are here: SDK calls and keyed calls.
 */
export class JoinableCalls {
  readonly #byFingerprint = new Map<string, JoinableCall>()
  readonly #byKey = new Map<string, JoinableCall>()

  /** The running call with this fingerprint (the fingerprint names the owner). */
  withFingerprint(id: string): JoinableCall | undefined {
    return this.#byFingerprint.get(id)
  }

  /** The running call of an owner's idempotency key. */
  withKey(owner: string, keyDigest: string): JoinableCall | undefined {
    return this.#byKey.get(`${owner}:${keyDigest}`)
  }

  /** Registers a call; the first of several identical unkeyed calls stays the one retries join. */
  add(call: JoinableCall): void {
    if (!this.#byFingerprint.has(call.fingerprint.id)) this.#byFingerprint.set(call.fingerprint.id, call)
    if (call.keyDigest !== undefined) this.#byKey.set(`${call.owner}:${call.keyDigest}`, call)
  }

  remove(call: JoinableCall): void {
    if (this.#byFingerprint.get(call.fingerprint.id) === call) this.#byFingerprint.delete(call.fingerprint.id)
    const key = `${call.owner}:${call.keyDigest}`
    if (call.keyDigest !== undefined && this.#byKey.get(key) === call) this.#byKey.delete(key)
  }
}
