import { LRUCache } from 'lru-cache'

/** A 2xx whole answer as it was sent, kept for a retry. */
export interface KeptAnswer {
  /** The request id of the call that made it. */
  requestId: string
  status: number
  contentType: string
  body: Buffer
}

/** Bytes counted for an answer beyond its body (the entry and its strings). */
const ENTRY_OVERHEAD = 256

/**
 * The 2xx whole answers of the last `recentMs`, by fingerprint, in memory only: TCP can report a response delivered
 * that the client never read, and the SDK's retry must then be served without a second paid call.
 */
export class RecentAnswers {
  readonly #cache: LRUCache<string, KeptAnswer>

  constructor(options: { ttlMs: number; maxBytes: number }) {
    this.#cache = new LRUCache<string, KeptAnswer>({
      ttl: options.ttlMs,
      ttlAutopurge: false,
      maxSize: options.maxBytes,
      sizeCalculation: (answer) => answer.body.length + ENTRY_OVERHEAD,
    })
  }

  get(fingerprint: string): KeptAnswer | undefined {
    return this.#cache.get(fingerprint)
  }

  set(fingerprint: string, answer: KeptAnswer): void {
    // An answer larger than the whole bound is not kept (lru-cache refuses it rather than evicting everything).
    if (answer.body.length + ENTRY_OVERHEAD <= this.#cache.maxSize) this.#cache.set(fingerprint, answer)
  }

  clear(): void {
    this.#cache.clear()
  }
}
