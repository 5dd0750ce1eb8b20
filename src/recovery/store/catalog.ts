import type { CatalogEntry, RecordKeys } from './layout.js'

/**
 * What differs between a generic Keyv store and Redis: the per-owner catalog, existence checks and
 * deletion. Record values themselves are always written and read through Keyv.
 * Keys given to a backend are logical keys (before Keyv's and the adapter's prefixes).
 */
export interface OwnerCatalog {
  /** Resolves when the store can take commands now; rejects (store_unavailable) when it is known to be down. */
  ready(): Promise<void>
  /**
   * Adds or replaces one entry; the catalog lives at least as long as its newest entry. `bytes` is the record's
   * size as the store counts it. Past the owner's quota, the owner's oldest records are removed.
   */
  add(owner: string, entry: CatalogEntry, ttlMs: number, bytes: number): Promise<void>
  /** The owner's live entries, unordered; expired entries and entries whose detail is gone are pruned. */
  entries(owner: string): Promise<CatalogEntry[]>
  /** Removes catalog entries, then the records' keys; resolves to how many of the records existed. */
  remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number>
  /** Whether freshly written keys are all present, or undefined when that cannot be checked cheaply. */
  verifyWritten(keys: string[]): Promise<boolean | undefined>
  /** An authoritative existence check that rejects when the store is down, or undefined when there is none. */
  probe(keys: string[]): Promise<boolean[] | undefined>
  /** Disconnects the Keyv a user passed in, without waiting on a store that cannot answer. */
  disconnect(): Promise<void>
}
