import { hash as sha } from 'node:crypto'
import type { CallSpec } from '../call/call-spec.js'

/** What makes two model calls the same call: owner, operation, model and the canonical hash of the body. */
export interface Fingerprint {
  /** A hex digest of all four, the key of running calls and kept answers. */
  id: string
  /** The body's `request_body_hash`, as recovery records carry it. */
  bodyHash: string
}

/** The fingerprint of a call; hashing a large body happens off the event loop. */
export async function fingerprintOf(spec: CallSpec): Promise<Fingerprint> {
  const hash = await spec.requestHash()
  // JSON keeps the parts apart whatever characters a model id holds.
  const id = sha('sha256', JSON.stringify([spec.owner, spec.operation, spec.model.id, hash]), 'hex')
  return { id, bodyHash: hash }
}

/** The digest an `Idempotency-Key` is stored under: client text never becomes part of a store key. */
export function keyDigest(key: string): string {
  return sha('sha256', key, 'hex')
}
