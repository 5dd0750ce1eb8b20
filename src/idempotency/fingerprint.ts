import { hash as sha } from 'node:crypto'
import type { CallSpec } from '../call/call-spec.js'

/**
 * What makes two model calls the same call: owner, operation, model and the canonical hash of the body (and, for an AWS
 * SDK's unkeyed call, its invocation id).
 */
export interface Fingerprint {
  /** A hex digest of all four, the key of running calls and kept answers. */
  id: string
  /** The body's `request_body_hash`, as recovery records carry it. */
  bodyHash: string
}

/** The fingerprint of a call; hashing a large body happens off the event loop. */
export async function fingerprintOf(spec: CallSpec): Promise<Fingerprint> {
  const hash = await spec.requestHash()
  const parts = [spec.owner, spec.operation, spec.model.id, hash]
  // An AWS SDK's attempts share their call's invocation id: a retry then joins its own call, never another call with
  // the same body. Not with a key, whose fingerprint must not change when a client retries the key under a new call.
  const { invocationId, key } = spec.repeat
  if (invocationId !== undefined && key === undefined) parts.push(invocationId)
  // JSON keeps the parts apart whatever characters a model id holds.
  const id = sha('sha256', JSON.stringify(parts), 'hex')
  return { id, bodyHash: hash }
}

/** The digest an `Idempotency-Key` is stored under: client text never becomes part of a store key. */
export function keyDigest(key: string): string {
  return sha('sha256', key, 'hex')
}
