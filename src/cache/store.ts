import { LRUCache } from 'lru-cache'
import type { TokenCounts } from '../types.js'
import type { CacheFilter } from './types.js'

/** An answer in the cache: the upstream's answer as it came (a whole body, or a stream's SSE text), and whose it is. */
export interface CachedAnswer {
  kind: 'whole' | 'stream'
  contentType: string
  body: Buffer
  /** Unix ms when it was stored: the `Age` of a hit. */
  storedAt: number
  /** The upstream's token counts for it, reported by a hit's usage event (at no cost). */
  usage: TokenCounts | undefined
  /** The owner whose call stored it, and the model id it asked for: what `cache.delete` matches. */
  owner: string
  model: string
}

/** Where cached answers live: in this process, or in the gateway's Redis store for every process. */
export interface AnswerStore {
  /** The answer under `id`, or undefined (none, expired, or the store could not be asked). */
  get(id: string): Promise<CachedAnswer | undefined>
  /** The answer under `id` when this process holds it and can say so at once (the in-memory cache); else undefined. */
  getNow?(id: string): CachedAnswer | undefined
  set(id: string, answer: CachedAnswer, ttlMs: number): Promise<void>
  /** `set` done at once, where the store can (the in-memory cache). */
  setNow?(id: string, answer: CachedAnswer, ttlMs: number): void
  /** Removes the matching answers; resolves how many went. */
  delete(filter: CacheFilter): Promise<number>
}

/** What an entry is reckoned to hold beside its body (its envelope and key). */
const ENTRY_OVERHEAD_BYTES = 256

/** Whether a cached answer matches a delete's filter. */
export const matches = (answer: CachedAnswer, filter: CacheFilter): boolean =>
  (filter.owner === undefined || answer.owner === filter.owner) && (filter.model === undefined || answer.model === filter.model)

/**
 * The in-memory cache: least recently used first out past `maxBytes` all answers together; one answer above a
 * quarter of it is refused, so a few large answers cannot empty the cache of the rest.
 */
export class MemoryAnswers implements AnswerStore {
  readonly #lru: LRUCache<string, CachedAnswer>

  constructor(maxBytes: number) {
    this.#lru = new LRUCache<string, CachedAnswer>({
      maxSize: maxBytes,
      maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
      sizeCalculation: (answer) => answer.body.length + ENTRY_OVERHEAD_BYTES,
    })
  }

  get(id: string): Promise<CachedAnswer | undefined> {
    return Promise.resolve(this.#lru.get(id))
  }

  getNow(id: string): CachedAnswer | undefined {
    return this.#lru.get(id)
  }

  set(id: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    this.setNow(id, answer, ttlMs)
    return Promise.resolve()
  }

  setNow(id: string, answer: CachedAnswer, ttlMs: number): void {
    this.#lru.set(id, answer, { ttl: ttlMs })
  }

  delete(filter: CacheFilter): Promise<number> {
    let deleted = 0
    for (const [id, answer] of this.#lru.entries()) {
      if (!matches(answer, filter)) continue
      this.#lru.delete(id)
      deleted++
    }
    return Promise.resolve(deleted)
  }
}
