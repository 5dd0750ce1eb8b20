// What makes two calls the same call for the cache: every field of the body, whatever its order or spacing, save
// the ones that only pick the framing of the answer; what the client asked for and of which upstream target; and,
// unless the cache is shared, who asked.
import { hash } from 'node:crypto'
import type { CallSpec } from '../call/call-spec.js'
import { requestBodyHash, requestBodyHashes } from '../json/hash.js'

/**
 * Top-level body fields that choose how the answer is framed, not what it says: a streamed call and a whole one of
 * the same body share their answer, each written in its own framing. (`stream_options` asks for a usage event the
 * gateway asks the upstream for anyway, and takes out of the stream when the client did not.)
 */
export const FRAMING_FIELDS: readonly string[] = ['stream', 'stream_options']

/** What of a model a key is made of: the id asked for, and the upstream target it resolved to. */
type KeyedModel = Pick<CallSpec['model'], 'id' | 'upstreamModel'> & { upstream: { name: string } }

/** What of a call its key is made of. */
export type KeyedCall = Pick<CallSpec, 'owner' | 'operation' | 'stream' | 'requestHash'> & {
  body: Pick<CallSpec['body'], 'value' | 'fields'>
  model: KeyedModel
  bodies: { operationFor(model: KeyedModel): CallSpec['operation'] }
}

/** One call's place in the cache. */
export interface CacheKey {
  /** A digest of every part below: what the store is keyed by. */
  id: string
  /** The owner whose call it is (the id usage events carry), for `cache.delete({ owner })`, whatever the scope. */
  owner: string
  /** The model id the client asked for, for `cache.delete({ model })`. */
  model: string
}

function withoutFraming(fields: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const name of Object.keys(fields)) if (!FRAMING_FIELDS.includes(name)) copy[name] = fields[name]
  return copy
}

const hasFraming = (fields: Record<string, unknown>) => FRAMING_FIELDS.some((name) => name in fields)

/**
 * The key of a call. The body counts through the gateway's canonical hash (the `request_body_hash` recoveries are
 * looked up by): the call's own when its body has no framing field, else the same hash of the body without them. A
 * body too large to have been parsed whole is hashed as it is, with its framing in the key (it is cached per framing).
 */
export async function cacheKey(spec: KeyedCall, shared: boolean): Promise<CacheKey> {
  const { value, fields } = spec.body
  let bodyHash: string
  let framing = ''
  if (value !== undefined && hasFraming(value)) {
    // The call's own hash comes from the same canonical form when nothing asked for it yet: a body canonicalised once.
    const { requestHash } = spec
    if (requestHash.seed && !requestHash.asked?.()) {
      const hashes = requestBodyHashes(value, FRAMING_FIELDS)
      requestHash.seed(hashes.all)
      bodyHash = hashes.without
    } else bodyHash = requestBodyHash(withoutFraming(value))
  } else {
    bodyHash = await spec.requestHash()
    if (value === undefined && hasFraming(fields)) framing = spec.stream ? 'stream' : 'whole'
  }
  const { model } = spec
  const parts = [
    shared ? '' : spec.owner,
    spec.operation,
    model.id,
    model.upstream.name,
    model.upstreamModel,
    spec.bodies.operationFor(model),
    bodyHash,
    framing,
  ]
  // One-shot: a Hash object costs more than hashing these few bytes.
  const id = hash('sha256', parts.join('\u0000'), 'base64url').slice(0, 32)
  return { id, owner: spec.owner, model: model.id }
}
