// The Idempotency-Key of a background create: the first create with a key keeps the call it started under the key,
// with its fingerprint, so a create sent again gets that call, and the key sent with another request is refused as
// on the plain path.
import type { CallSpec } from '../call/call-spec.js'
import { keyReused } from '../idempotency/admit.js'
import { fingerprintOf, keyDigest } from '../idempotency/fingerprint.js'
import type { Runtime } from '../runtime.js'

/** What a create's key names: the call an earlier create started (undefined when this one claimed it). */
export interface CreateKeyClaim {
  earlier: string | undefined
  /** Makes the key this create's (the earlier call is gone). */
  take(): Promise<void>
}

/** The store name of a background create's Idempotency-Key: its digest, never the key. */
const keyName = (key: string) => `bgkey:${keyDigest(key)}`

/** `requestId fingerprint`: a value written before fingerprints were kept holds the request id alone. */
function decode(value: string): { requestId: string; fingerprint: string | undefined } {
  const space = value.indexOf(' ')
  return space < 0
    ? { requestId: value, fingerprint: undefined }
    : { requestId: value.slice(0, space), fingerprint: value.slice(space + 1) }
}

/** Claims `key` for this create; rejects with `idempotency_key_reused` when it names a call of another request. */
export async function claimCreateKey(rt: Runtime, spec: CallSpec, key: string): Promise<CreateKeyClaim> {
  const { ttlMs } = rt.options.recovery
  const fingerprint = (await fingerprintOf(spec)).id
  const value = `${spec.requestId} ${fingerprint}`
  const existing = await rt.store.claimValue(spec.owner, keyName(key), value, ttlMs)
  const take = () => rt.store.setValue(spec.owner, keyName(key), value, ttlMs)
  if (existing === undefined) return { earlier: undefined, take }
  const earlier = decode(existing)
  if (earlier.fingerprint !== undefined && earlier.fingerprint !== fingerprint) throw keyReused()
  return { earlier: earlier.requestId, take }
}
