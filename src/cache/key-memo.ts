// The keys of calls that were hits, known again from their bytes. A hit's key would otherwise be worked out anew on
// every call (the body's canonical form and a digest), most of what a hit costs the gateway.
import { LRUCache } from 'lru-cache'

/** Bodies up to this size have their key remembered by their bytes: a larger one costs more to hold than to hash. */
export const MEMO_BODY_BYTES = 64 * 1024

/** What a call's key is made of besides its body: whether the cache is shared, whose call it is, and its target. */
export interface MemoParts {
  shared: boolean
  owner: string
  target: readonly string[]
}

/** What a `KeyMemo` gives back of a call: its key's id, and its body's own hash when it was worked out. */
export interface Remembered {
  id: string
  requestHash: string | undefined
}

/** One remembered call: its key, and everything it is known again by. */
interface Entry extends Remembered, MemoParts {
  bytes: Buffer
}

/** What an entry is counted as against the bound: its bytes, its owner's characters, and about what the rest takes. */
function entrySize(entry: Entry): number {
  return entry.bytes.length + 2 * entry.owner.length + 160
}

function bucketSize(bucket: readonly Entry[]): number {
  let size = 0
  for (const entry of bucket) size += entrySize(entry)
  return size
}

/**
 * A 30-bit fingerprint of `bytes` (FNV-1a over 32-bit words, the length mixed in): the bucket a call is looked for in.
 * Bodies that share one are told apart by their bytes; a small integer is a map key that costs nothing to hash,
 * where a key holding the body cost its flattening and a hash of every character on every hit. Exported for the
 * tests, which make two bodies share one.
 */
export function fingerprint(bytes: Buffer): number {
  const n = bytes.length
  const view = new DataView(bytes.buffer, bytes.byteOffset, n)
  let h = 0x811c9dc5 ^ n
  const words = n >>> 2
  for (let i = 0; i < words; i++) h = Math.imul(h ^ view.getUint32(i << 2, true), 0x01000193)
  for (let i = words << 2; i < n; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193)
  return h & 0x3fffffff
}

/** Whether `entry` is the call with these bytes and parts. */
function isCall(entry: Entry, bytes: Buffer, parts: MemoParts): boolean {
  if (entry.shared !== parts.shared || entry.owner !== parts.owner) return false
  const { target } = parts
  if (entry.target.length !== target.length) return false
  for (let i = 0; i < target.length; i++) if (entry.target[i] !== target[i]) return false
  return entry.bytes.equals(bytes)
}

/**
 * The keys of calls that were hits, by their exact bytes and everything else the key is made of: a call that is a
 * hit again skips the canonical form of its body and its hashes, while a miss only looks (a body is remembered once it
 * was a hit). Held in this process, at most `maxBytes` of them, each counted by its bytes as held. The same bytes and
 * parts always make the same key, so a memo only ever answers what `cacheKey` would. The owner is part of what a call
 * is known by whatever the scope: no owner's call is sped up by another's.
 */
export class KeyMemo {
  readonly #buckets: LRUCache<number, Entry[]>
  /** How many remembered bodies have each length: a body of another length is not looked up (its fingerprint not taken). */
  readonly #lengths = new Map<number, number>()
  readonly #maxBytes: number

  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(1, maxBytes)
    this.#buckets = new LRUCache<number, Entry[]>({
      maxSize: this.#maxBytes,
      sizeCalculation: bucketSize,
      // Every way out (evicted, replaced, deleted) passes here, so the lengths stay those of the bodies held.
      dispose: (bucket) => {
        for (const entry of bucket) this.#count(entry.bytes.length, -1)
      },
    })
  }

  /** Bytes held now, as counted against the bound. */
  get heldBytes(): number {
    return this.#buckets.calculatedSize
  }

  /** Whether a body of `length` bytes may be remembered: false means it is not, and it need not be looked up. */
  mayHold(length: number): boolean {
    return this.#lengths.has(length)
  }

  /** The remembered key of the call with these bytes and parts, if it is held. */
  find(bytes: Buffer, parts: MemoParts): Remembered | undefined {
    const bucket = this.#buckets.get(fingerprint(bytes))
    if (bucket === undefined) return undefined
    for (const entry of bucket) if (isCall(entry, bytes, parts)) return entry
    return undefined
  }

  /** Remembers the key of the call with these bytes and parts. */
  remember(bytes: Buffer, parts: MemoParts, remembered: Remembered): void {
    // A copy of its own: the request's bytes may be a view of a larger buffer, which would be held with them.
    const own = Buffer.allocUnsafeSlow(bytes.length)
    bytes.copy(own)
    const entry: Entry = { ...remembered, shared: parts.shared, owner: parts.owner, target: [...parts.target], bytes: own }
    // One larger than the whole bound is not held (lru-cache would refuse it anyway, with a warning).
    if (entrySize(entry) > this.#maxBytes) return
    const key = fingerprint(bytes)
    const bucket = (this.#buckets.peek(key) ?? []).filter((other) => !isCall(other, bytes, parts))
    bucket.push(entry)
    // Bodies that share a fingerprint, oldest first, are let go until the bucket fits the bound.
    while (bucketSize(bucket) > this.#maxBytes) bucket.shift()
    // The bucket replaced is counted out by `dispose`, this one in here.
    for (const held of bucket) this.#count(held.bytes.length, 1)
    this.#buckets.set(key, bucket)
  }

  #count(length: number, by: 1 | -1): void {
    const left = (this.#lengths.get(length) ?? 0) + by
    if (left > 0) this.#lengths.set(length, left)
    else this.#lengths.delete(length)
  }
}
