// What makes two calls the same call for the cache: every field of the body, whatever its order or spacing, save
// the ones that only pick the framing of the answer; what the client asked for and of which upstream target; and,
// unless the cache is shared, who asked.
import { hash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
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
  /** `bytes`, the body as the gateway read it, lets a `KeyMemo` know it again. */
  body: Pick<CallSpec['body'], 'value' | 'fields'> & { bytes?: Buffer }
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
  /** Has the memo this key was made with answer it from the call's bytes from now on (called on a hit: see `KeyMemo`). */
  remember?: () => void
}

function withoutFraming(fields: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const name of Object.keys(fields)) if (!FRAMING_FIELDS.includes(name)) copy[name] = fields[name]
  return copy
}

const hasFraming = (fields: Record<string, unknown>) => FRAMING_FIELDS.some((name) => name in fields)

/** Bodies up to this size have their key remembered by their bytes: a larger one costs more to hold than to hash. */
export const MEMO_BODY_BYTES = 64 * 1024

/** What a `KeyMemo` holds of a call: its key's id, and its body's own hash when the key's making gave it. */
interface Remembered {
  id: string
  requestHash: string | undefined
}

/**
 * The keys of calls that were hits, by their exact bytes and everything else the key is made of: a call that is a
 * hit again skips the canonical form of its body and its hashes, most of what a hit costs the gateway, while a miss
 * only looks (a body is remembered once it was a hit). Held in this process, at most `maxBytes` of them, each counted
 * by its bytes as held (two per character of its memo key, which holds the body). The same bytes always make the same
 * key, so a memo only ever answers what `cacheKey` would. The owner is part of the memo key whatever the scope: no
 * owner's call is sped up by another's.
 */
export class KeyMemo {
  readonly #keys: LRUCache<string, Remembered>

  constructor(maxBytes: number) {
    this.#keys = new LRUCache<string, Remembered>({ maxSize: Math.max(1, maxBytes), sizeCalculation: (_, key) => 2 * key.length + 64 })
  }

  /** Bytes held now, as counted against the bound. */
  get heldBytes(): number {
    return this.#keys.calculatedSize
  }

  get(key: string): Remembered | undefined {
    return this.#keys.get(key)
  }

  set(key: string, remembered: Remembered): void {
    // A key larger than the whole bound is not held (lru-cache would refuse it anyway, with a warning).
    if (2 * key.length + 64 <= this.#keys.maxSize) this.#keys.set(key, remembered)
  }
}

/**
 * The key of a call. The body counts through the gateway's canonical hash (the `request_body_hash` recoveries are
 * looked up by): the call's own when its body has no framing field, else the same hash of the body without them. A
 * body too large to have been parsed whole is hashed as it is, with its framing in the key (it is cached per framing).
 * With a `memo`, a call whose bytes and target it has seen is keyed from it, at once (no promise turn: a repeated hit
 * is the cache's fast path).
 */
export function cacheKey(spec: KeyedCall, shared: boolean, memo?: KeyMemo): CacheKey | Promise<CacheKey> {
  const { value, bytes } = spec.body
  const { model } = spec
  const target = [spec.operation, model.id, model.upstream.name, model.upstreamModel, spec.bodies.operationFor(model)]
  const memoKey =
    memo && value !== undefined && bytes !== undefined && bytes.length <= MEMO_BODY_BYTES
      ? `${shared ? 'shared' : 'owner'}\u0000${spec.owner}\u0000${target.join('\u0000')}\u0000${bytes.toString('latin1')}`
      : undefined
  const known = memoKey === undefined ? undefined : memo?.get(memoKey)
  if (known) {
    if (known.requestHash !== undefined && !spec.requestHash.asked?.()) spec.requestHash.seed?.(known.requestHash)
    return { id: known.id, owner: spec.owner, model: model.id }
  }
  return madeKey(spec, shared, target, memoKey, memo)
}

/**
 * The key of a call no memo knew: its body's canonical hash and its target's, hashed together. A parsed body is hashed
 * here, at once (the call's own hash seeded with it when nothing asked for it yet); only a body too large to have been
 * parsed waits for its hash from the hash worker, and is cached per framing (its framing fields cannot be taken out).
 */
function madeKey(
  spec: KeyedCall,
  shared: boolean,
  target: readonly string[],
  memoKey: string | undefined,
  memo: KeyMemo | undefined,
): CacheKey | Promise<CacheKey> {
  const { value, fields } = spec.body
  if (value === undefined) {
    const framing = hasFraming(fields) ? (spec.stream ? 'stream' : 'whole') : ''
    return spec.requestHash().then((bodyHash) => keyOf(spec, shared, target, bodyHash, framing))
  }
  const own = spec.requestHash
  const seedable = own.seed !== undefined && !own.asked?.()
  let bodyHash: string
  let requestHash: string | undefined
  if (!hasFraming(value)) {
    bodyHash = requestBodyHash(value)
    requestHash = bodyHash
  } else if (seedable) {
    // The call's own hash comes from the same canonical form: a body canonicalised once.
    const hashes = requestBodyHashes(value, FRAMING_FIELDS)
    requestHash = hashes.all
    bodyHash = hashes.without
  } else bodyHash = requestBodyHash(withoutFraming(value))
  if (seedable && requestHash !== undefined) own.seed?.(requestHash)
  const key = keyOf(spec, shared, target, bodyHash, '')
  if (memoKey !== undefined && memo) key.remember = () => memo.set(memoKey, { id: key.id, requestHash })
  return key
}

/** The key's id: who asks (unless shared), what of which target, and the body's hash, hashed together. */
function keyOf(spec: KeyedCall, shared: boolean, target: readonly string[], bodyHash: string, framing: string): CacheKey {
  const parts = [shared ? '' : spec.owner, ...target, bodyHash, framing]
  // One-shot: a Hash object costs more than hashing these few bytes.
  const id = hash('sha256', parts.join('\u0000'), 'base64url').slice(0, 32)
  return { id, owner: spec.owner, model: spec.model.id }
}
