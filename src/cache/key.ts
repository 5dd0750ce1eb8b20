// What makes two calls the same call for the cache: every field of the body, whatever its order or spacing, save
// the ones that only pick the framing of the answer; what the client asked for and of which upstream target; and,
// unless the cache is shared, who asked.
import { hash } from 'node:crypto'
import type { CallSpec } from '../call/call-spec.js'
import { canonicalBodyPieces, canonicalBodyPiecesWithout, digestAfter, hashOfPieces } from '../json/hash.js'
import { type KeyMemo, MEMO_BODY_BYTES, type MemoParts } from './key-memo.js'

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

/**
 * The key of a call. The body counts through its canonical form (the one the `request_body_hash` recoveries are
 * looked up by is a hash of): the whole body when it has no framing field, else the body without them. A body too
 * large to have been parsed whole counts through its hash, as it is, with its framing in the key (it is cached per
 * framing). With a `memo`, a call whose bytes and target it has seen is keyed from it, at once (no promise turn: a
 * repeated hit is the cache's fast path).
 */
export function cacheKey(spec: KeyedCall, shared: boolean, memo?: KeyMemo): CacheKey | Promise<CacheKey> {
  const { value, bytes } = spec.body
  const { model } = spec
  const target = [spec.operation, model.id, model.upstream.name, model.upstreamModel, spec.bodies.operationFor(model)]
  const memoable = memo !== undefined && value !== undefined && bytes !== undefined && bytes.length <= MEMO_BODY_BYTES
  const parts: MemoParts = { shared, owner: spec.owner, target }
  // Looked up only for a body of a length the memo holds one of: most misses are not.
  const known = memoable && memo.mayHold(bytes.length) ? memo.find(bytes, parts) : undefined
  if (known) {
    if (known.requestHash !== undefined && !spec.requestHash.asked?.()) spec.requestHash.seed?.(known.requestHash)
    return { id: known.id, owner: spec.owner, model: model.id }
  }
  if (!memoable) return madeKey(spec, shared, target, undefined)
  return madeKey(spec, shared, target, (id, made) => () => memo.remember(bytes, parts, { id, requestHash: made?.() }))
}

/** Canonical forms this long or shorter are held for their hash until it is asked; a longer one is hashed at once. */
const LAZY_HASH_CHARS = 16 * 1024

/**
 * The key of a call no memo knew. A parsed body is put in its canonical form here, at once, and digested with the
 * rest of the key in one hash; the call's own hash comes from the same form, worked out only when something asks
 * for it (most calls never do). Only a body too large to have been parsed waits for its hash from the hash worker,
 * and is cached per framing (its framing fields cannot be taken out). `remembering` makes the key's `remember` from
 * its id and (when the canonical form was of the whole body) what works out the body's own hash.
 */
function madeKey(
  spec: KeyedCall,
  shared: boolean,
  target: readonly string[],
  remembering: ((id: string, made: (() => string) | undefined) => () => void) | undefined,
): CacheKey | Promise<CacheKey> {
  const { value, fields } = spec.body
  const who = shared ? '' : spec.owner
  if (value === undefined) {
    const framing = hasFraming(fields) ? (spec.stream ? 'stream' : 'whole') : ''
    // One-shot: a Hash object costs more than hashing these few bytes.
    return spec
      .requestHash()
      .then((bodyHash) => keyOf(spec, hash('sha256', [who, ...target, bodyHash, framing].join('\u0000'), 'base64url').slice(0, 32)))
  }
  const own = spec.requestHash
  const seedable = own.seed !== undefined && !own.asked?.()
  // A call without its bytes (as the key's tests make) counts as large: it takes the general writer.
  const size = spec.body.bytes?.length ?? Number.POSITIVE_INFINITY
  let keyed: string[]
  let all: string[] | undefined
  if (!hasFraming(value)) {
    keyed = canonicalBodyPieces(value, size)
    all = keyed
  } else if (seedable) {
    // The call's own hash comes from the same canonical form: a body canonicalised once.
    ;[all, keyed] = canonicalBodyPiecesWithout(value, FRAMING_FIELDS, size)
  } else keyed = canonicalBodyPieces(withoutFraming(value), size)
  // The canonical form begins with `{`, a hash never does: a parsed body's key never meets an unparsed one's.
  const key = keyOf(spec, digestAfter(`${[who, ...target].join('\u0000')}\u0000`, keyed))
  let made: (() => string) | undefined
  if (all !== undefined) {
    const whole = all
    let hashed: string | undefined
    made = () => (hashed ??= hashOfPieces(whole))
    if (seedable) own.seed?.(piecesLength(whole) <= LAZY_HASH_CHARS ? made : made())
  }
  if (remembering) key.remember = remembering(key.id, made)
  return key
}

function piecesLength(pieces: readonly string[]): number {
  let n = 0
  for (const piece of pieces) n += piece.length
  return n
}

/** A key of the call from its id. */
function keyOf(spec: KeyedCall, id: string): CacheKey {
  return { id, owner: spec.owner, model: spec.model.id }
}
