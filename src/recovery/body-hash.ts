import { requestBodyHash } from '../json/hash.js'
import { requestBodyHashOffLoop } from '../json/hash-worker.js'

/**
 * A call's request_body_hash, computed once on first ask. `seed`, where there is one, hands it a hash worked out from
 * the same canonical form by a caller that canonicalised the body anyway (the response cache's key), or a function
 * that works it out from that form only if it is asked for; `asked` says whether it is still worth doing so.
 */
export interface RequestHash {
  (): Promise<string>
  asked?: () => boolean
  seed?: (hash: string | (() => string)) => void
}

/**
 * The request_body_hash of a body, computed on the first call and shared by every later one: a call's fingerprint,
 * its record, and the start of hashing once its client left all ask for the same hash. A failure is held for
 * whoever awaits it, never left unheard when nobody does.
 */
export function hashOnce(body: { bytes: Buffer; value: Record<string, unknown> | undefined }, owner: string): RequestHash {
  let hashing: Promise<string> | undefined
  let seeded: (() => string) | undefined
  const requestHash: RequestHash = () => {
    if (hashing === undefined) {
      hashing = seeded ? fromSeed(seeded) : bodyHash(body, owner)
      seeded = undefined
      hashing.catch(() => {})
    }
    return hashing
  }
  requestHash.asked = () => hashing !== undefined || seeded !== undefined
  requestHash.seed = (hash) => {
    if (hashing !== undefined || seeded !== undefined) return
    if (typeof hash === 'string') hashing = Promise.resolve(hash)
    else seeded = hash
  }
  return requestHash
}

function fromSeed(seeded: () => string): Promise<string> {
  try {
    return Promise.resolve(seeded())
  } catch (error) {
    return Promise.reject(error)
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
