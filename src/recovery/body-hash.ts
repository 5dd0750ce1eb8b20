import { requestBodyHash } from '../json/hash.js'
import { requestBodyHashOffLoop } from '../json/hash-worker.js'

/** Bodies from this size on are hashed off the event loop; below it a hash costs less than the hand-off. */
export const HASH_OFF_LOOP_FROM_BYTES = 1024 * 1024

/**
 * The request_body_hash of a body, computed on the first call and shared by every later one: a call's fingerprint,
 * its record, and the start of hashing once its client left all ask for the same hash. A failure is held for
 * whoever awaits it, never left unheard when nobody does.
 */
export function hashOnce(body: { bytes: Buffer; value: Record<string, unknown> | undefined }): () => Promise<string> {
  let hashing: Promise<string> | undefined
  return () => {
    if (hashing === undefined) {
      hashing = bodyHash(body)
      hashing.catch(() => {})
    }
    return hashing
  }
}

/**
 * The request_body_hash of a body as the gateway holds it: from the parsed value when it is at hand (small
 * bodies), else from the bytes, on a worker thread when they are large (lookup and capture of big bodies).
 */
export async function bodyHash(body: { bytes: Buffer; value: Record<string, unknown> | undefined }): Promise<string> {
  if (body.value !== undefined) return requestBodyHash(body.value)
  if (body.bytes.length < HASH_OFF_LOOP_FROM_BYTES) return requestBodyHash(body.bytes)
  return requestBodyHashOffLoop(body.bytes)
}
