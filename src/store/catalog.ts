import type { CatalogEntry, RecordKeys, RecordValue } from './layout.js'

/** One page of an owner's catalog, newest first. */
export interface CatalogPage {
  entries: CatalogEntry[]
  /** Whether live entries follow the last one. */
  hasMore: boolean
}

/** How a caller follows a walk over an owner's catalog. */
export interface CatalogWalk {
  /** Only entries it accepts are wanted. */
  match?: (entry: CatalogEntry) => boolean
  /** Called after each page read (the store restarts its deadline there). */
  step?: () => void
}

/**
 * What differs between a generic Keyv store and Redis: how a record is written with its catalog entry, the
 * per-owner catalog, existence checks and deletion. Record values are read through Keyv, and written in the form
 * Keyv writes them (through Keyv itself, or by Redis in one transaction).
 * Keys given to a backend are logical keys (before Keyv's and the adapter's prefixes).
 */
export interface OwnerCatalog {
  /** Resolves when the store can take commands now; rejects (store_unavailable) when it is known to be down. */
  ready(): Promise<void>
  /**
   * Writes one record's values (detail first) and adds or replaces its entry once they are confirmed taken; rejects
   * (store_unavailable) and lists nothing when a part was not. The catalog lives at least as long as its newest entry.
   * `bytes` is the record's size as the store counts it; past the owner's quota, the owner's oldest records are removed.
   */
  put(owner: string, entry: CatalogEntry, ttlMs: number, record: { bytes: number; values: RecordValue[] }): Promise<void>
  /**
   * The owner's live entries, unordered; expired entries and entries whose detail is gone are pruned. With `match`,
   * only the entries it accepts (a backend may skip checking the others). A backend that reads the catalog in pages
   * calls `step` after each one.
   */
  entries(owner: string, walk?: CatalogWalk): Promise<CatalogEntry[]>
  /**
   * For a backend that keeps its catalog in order: up to `limit` live entries newest first, starting right after the
   * entry `after`, reading only what the page needs; undefined when `after` is not a live entry. Without it the store
   * lists every entry, sorts and slices.
   */
  page?(owner: string, page: { limit: number; after?: string }, walk?: CatalogWalk): Promise<CatalogPage | undefined>
  /** Removes catalog entries, then the records' keys; resolves to how many of the records existed. */
  remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number>
  /**
   * Removes (or, with `dryRun`, counts) every live record of the owner in bounded batches, for a backend whose
   * catalog can be too large to read at once; without it the store lists the entries and removes them.
   */
  removeAll?(owner: string, options: { dryRun: boolean }, walk?: CatalogWalk): Promise<number>
  /**
   * Reads one record value as Keyv's `get` would, for a backend that can read a large one without stalling the loop;
   * without it the store asks Keyv.
   */
  read?(key: string): Promise<unknown>
  /** An authoritative existence check that rejects when the store is down, or undefined when there is none. */
  probe(keys: string[]): Promise<boolean[] | undefined>
  /** Disconnects the Keyv a user passed in, without waiting on a store that cannot answer. */
  disconnect(): Promise<void>
}
