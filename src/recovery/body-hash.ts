import { requestBodyHash } from '../json/hash.js'
import { requestBodyHashOffLoop } from '../json/hash-worker.js'

/**
 * The request_body_hash of a body, computed on the first call and shared by every later one: a call's fingerprint,
 * its record, and the start of hashing once its client left all ask for the same hash. A failure is held for
 * whoever awaits it, never left unheard when nobody does.
 */
export function hashOnce(body: { bytes: Buffer; value: Record<string, unknown> | undefined }, owner: string): () => Promise<string> {
  let hashing: Promise<string> | undefined
  return () => {
    if (hashing === undefined) {
      hashing = bodyHash(body, owner)
      hashing.catch(() => {})
    }
    return hashing
  }
}

/**
 * The request_body_hash of a body as the gateway holds it: from the parsed value when it is at hand (a body cheap
 * to parse), else from the bytes on the hash worker, in `owner`'s turn (a large or deeply nested body, which the
 * gateway never parses whole on the loop: see read-body.ts).
 */
export async function bodyHash(body: { bytes: Buffer; value: Record<string, unknown> | undefined }, owner: string): Promise<string> {
  if (body.value !== undefined) return requestBodyHash(body.value)
  return requestBodyHashOffLoop(body.bytes, owner)
}
