// The response cache's public types (re-exported by src/types.ts, so they import nothing from it).
import type { Operation } from '../dialects/names.js'

/** What `cache.models` is asked about a call, when it is a function. */
export interface CacheableCall {
  /** The model id the client asked for. */
  model: string
  operation: Operation
  /** The owner id (a digest, never the key). */
  owner: string
  stream: boolean
}

/**
 * The exact-match response cache (docs/guides/caching.md): a call whose body, operation, upstream target and (with
 * `scope: 'owner'`) owner match one answered before is served that answer without an upstream call. Off unless set.
 */
export interface CacheOptions {
  /** The models whose calls are cached: a list of ids, or a function of the call. @default every model */
  models?: readonly string[] | ((call: CacheableCall) => boolean)
  /** How long an answer is served from the cache. @default 300000 (5 minutes) */
  ttlMs?: number
  /**
   * Bytes the in-memory cache holds, all answers together; past it the least recently used go first. One answer above
   * a quarter of it is never cached (in either store). @default 67108864 (64 MiB)
   */
  maxBytes?: number
  /**
   * `'owner'`: an answer is served only to the owner whose call made it; `'shared'`: to every owner (for answers
   * that name no one, such as embeddings of public text). @default 'owner'
   */
  scope?: 'owner' | 'shared'
  /** Cache answers cut by their output token limit too (`finish_reason: length`, `MAX_TOKENS`, `max_tokens`). @default false */
  storeLengthStops?: boolean
}

/** Which cached answers `cache.delete` removes: those of an owner, of a model, of both, or (neither) all of them. */
export interface CacheFilter {
  /** The owner id usage events carry. */
  owner?: string
  /** A configured model id. */
  model?: string
}
