import type Keyv from 'keyv'
import type { OwnerCatalog } from './catalog.js'
import { KeyedMutex, storeUnavailable } from './guard.js'
import {
  type CatalogEntry,
  catalogKey,
  deleteRecordKeys,
  parseCatalogEntry,
  type RecordKeys,
  type RecordValue,
  recordKeys,
  setRecordValues,
} from './layout.js'
import type { Eviction } from './memory-catalog.js'

/**
 * The per-owner catalog on a Keyv store a user passed in that is not Redis (the default in-memory store has
 * its own, see memory-catalog.ts):
 * one key `idx:{owner}` holding an array of catalog entries.
 *
 * Keyv has no atomic read-modify-write, so every change of one owner's catalog runs under an
 * in-process mutex. That makes it safe within one process only: several gateway processes sharing
 * one non-Redis store could lose each other's catalog updates. Share a store across processes with
 * Redis, where the catalog is a Redis hash (see redis-catalog.ts).
 */
export class KeyvCatalog implements OwnerCatalog {
  readonly #keyv: Keyv
  readonly #maxRecords: number
  readonly #onEvict: (eviction: Eviction) => void
  readonly #mutex = new KeyedMutex()

  /** `maxRecords`: per owner; past it the owner's oldest records are removed and reported to `onEvict`. */
  constructor(keyv: Keyv, options: { maxRecords: number; onEvict: (eviction: Eviction) => void }) {
    this.#keyv = keyv
    this.#maxRecords = options.maxRecords
    this.#onEvict = options.onEvict
  }

  async ready(): Promise<void> {}

  // A user's store may answer `has` with a round trip per key: written keys are not checked on every write.
  async put(owner: string, entry: CatalogEntry, ttlMs: number, record: { values: RecordValue[] }): Promise<void> {
    await setRecordValues(this.#keyv, record.values, ttlMs)
    await this.#mutex.run(owner, async () => {
      const now = Date.now()
      const kept = (await this.#read(owner)).filter((e) => e.expires_at > now && e.request_id !== entry.request_id)
      kept.push(entry)
      // Request ids grow with time: past the cap, the smallest are the oldest.
      const over = kept.length - this.#maxRecords
      const dropped = over > 0 ? kept.sort((a, b) => (a.request_id < b.request_id ? -1 : 1)).splice(0, over) : []
      await this.#write(owner, kept)
      for (const old of dropped) await deleteRecordKeys(this.#keyv, recordKeys(owner, old.request_id))
      if (dropped.length > 0) this.#onEvict({ owner, requestIds: dropped.map((e) => e.request_id), reason: 'owner_record_limit' })
    })
  }

  entries(owner: string): Promise<CatalogEntry[]> {
    return this.#mutex.run(owner, async () => {
      const all = await this.#read(owner)
      const now = Date.now()
      const unexpired = all.filter((e) => e.expires_at > now)
      // A detail key can vanish before its entry expires (evicted by the LRU's byte bound, deleted elsewhere).
      const present = await Promise.all(unexpired.map((e) => this.#keyv.has(recordKeys(owner, e.request_id).detail)))
      const live = unexpired.filter((_, i) => present[i] === true)
      if (live.length !== all.length) await this.#write(owner, live)
      return live
    })
  }

  remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    return this.#mutex.run(owner, async () => {
      const ids = new Set(records.map((r) => r.requestId))
      const all = await this.#read(owner)
      const kept = all.filter((e) => !ids.has(e.request_id))
      if (kept.length !== all.length) await this.#write(owner, kept)
      let existed = 0
      for (const { keys } of records) {
        // Keyv's `has` honours expiry; `delete` of an expired-but-unpurged value would still say true.
        if (await this.#keyv.has(keys.detail)) existed++
        await deleteRecordKeys(this.#keyv, keys)
      }
      return existed
    })
  }

  async probe(): Promise<boolean[] | undefined> {
    return undefined
  }

  async disconnect(): Promise<void> {
    await this.#keyv.disconnect()
  }

  async #read(owner: string): Promise<CatalogEntry[]> {
    const raw: unknown = await this.#keyv.get(catalogKey(owner))
    if (!Array.isArray(raw)) return []
    const entries: CatalogEntry[] = []
    for (const item of raw) {
      const entry = parseCatalogEntry(item)
      if (entry) entries.push(entry)
    }
    return entries
  }

  /** Writes a fresh array (the in-memory store keeps it by reference); the key lives as long as its newest entry. */
  async #write(owner: string, entries: CatalogEntry[]): Promise<void> {
    const key = catalogKey(owner)
    if (entries.length === 0) {
      await this.#keyv.delete(key)
      return
    }
    let latest = 0
    for (const e of entries) latest = Math.max(latest, e.expires_at)
    const ok: unknown = await this.#keyv.set(key, entries, Math.max(1, latest - Date.now()))
    if (ok === false) throw storeUnavailable('The recovery catalog could not be written.')
  }
}
