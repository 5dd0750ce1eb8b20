import type Keyv from 'keyv'
import type { OwnerCatalog } from './catalog.js'
import { storeUnavailable } from './guard.js'
import { type CatalogEntry, deleteRecordKeys, type RecordKeys, type RecordValue, recordKeys, setRecordValues } from './layout.js'

/** How much one owner may keep. */
export interface OwnerLimits {
  /** Records per owner; past it the owner's oldest go first. */
  maxRecords: number
  /** Bytes per owner (as the memory store counts them); past it the owner's oldest go first. */
  maxBytes: number
}

/** A record that left the store before its time, and why. */
export interface Eviction {
  owner: string
  requestId: string
  reason: 'owner_record_limit' | 'owner_byte_limit' | 'memory_full'
}

interface Kept {
  entry: CatalogEntry
  bytes: number
}

/**
 * The per-owner catalog of the default in-memory store, held in plain maps beside the LRU instead of as an
 * array value inside it: adding or removing a record is O(1) (rewriting a 12 000-entry array per capture stalled
 * the loop for seconds), and each owner is held to its own record and byte quota, evicting its own oldest first,
 * so one owner's burst can never push out another's records. Every eviction is reported with its request id.
 */
export class MemoryCatalog implements OwnerCatalog {
  private readonly owners = new Map<string, Map<string, Kept>>()
  private readonly bytesByOwner = new Map<string, number>()

  constructor(
    private readonly keyv: Keyv,
    private readonly limits: OwnerLimits,
    private readonly onEvict: (eviction: Eviction) => void,
  ) {}

  async ready(): Promise<void> {}

  async put(owner: string, entry: CatalogEntry, ttlMs: number, record: { bytes: number; values: RecordValue[] }): Promise<void> {
    await setRecordValues(this.keyv, record.values, ttlMs)
    const present = await Promise.all(record.values.map(({ key }) => this.keyv.has(key)))
    if (!present.every(Boolean)) throw storeUnavailable('The recovery record did not stay in the store (evicted or rejected).')
    const { bytes } = record
    this.forget(owner, entry.request_id)
    let kept = this.owners.get(owner)
    if (!kept) {
      kept = new Map()
      this.owners.set(owner, kept)
    }
    kept.set(entry.request_id, { entry, bytes })
    this.bytesByOwner.set(owner, (this.bytesByOwner.get(owner) ?? 0) + bytes)
    // Entries are kept in insertion order and request ids grow with time: the first is the oldest.
    while (kept.size > this.limits.maxRecords || (this.bytesByOwner.get(owner) ?? 0) > this.limits.maxBytes) {
      const oldest = kept.keys().next().value as string
      const reason = kept.size > this.limits.maxRecords ? 'owner_record_limit' : 'owner_byte_limit'
      await this.drop(owner, oldest)
      if (oldest === entry.request_id)
        throw storeUnavailable(`The recovery record is larger than an owner's quota (${this.limits.maxBytes} bytes).`)
      this.onEvict({ owner, requestId: oldest, reason })
    }
  }

  async entries(owner: string): Promise<CatalogEntry[]> {
    const kept = this.owners.get(owner)
    if (!kept) return []
    const now = Date.now()
    const live: CatalogEntry[] = []
    for (const [requestId, { entry }] of [...kept]) {
      if (entry.expires_at <= now) {
        this.forget(owner, requestId)
        continue
      }
      // The whole store's byte bound may have pushed a record out (reported by `evicted`); check in case it raced.
      if (!(await this.keyv.has(recordKeys(owner, requestId).detail))) {
        this.forget(owner, requestId)
        continue
      }
      live.push(entry)
    }
    return live
  }

  async remove(owner: string, records: Array<{ requestId: string; keys: RecordKeys }>): Promise<number> {
    let existed = 0
    for (const { requestId, keys } of records) {
      // Keyv's `has` honours expiry; `delete` of an expired-but-unpurged value would still say true.
      if (await this.keyv.has(keys.detail)) existed++
      this.forget(owner, requestId)
      await deleteRecordKeys(this.keyv, keys)
    }
    return existed
  }

  async probe(): Promise<undefined> {
    return undefined
  }

  async disconnect(): Promise<void> {
    this.owners.clear()
    this.bytesByOwner.clear()
  }

  /** Called when the whole store's byte bound pushed a record's detail out: the catalog forgets it and reports it. */
  evicted(owner: string, requestId: string): void {
    if (!this.owners.get(owner)?.has(requestId)) return
    this.forget(owner, requestId)
    this.onEvict({ owner, requestId, reason: 'memory_full' })
  }

  private async drop(owner: string, requestId: string): Promise<void> {
    this.forget(owner, requestId)
    const keys = recordKeys(owner, requestId)
    await deleteRecordKeys(this.keyv, keys)
  }

  private forget(owner: string, requestId: string): void {
    const kept = this.owners.get(owner)
    const gone = kept?.get(requestId)
    if (!kept || !gone) return
    kept.delete(requestId)
    const left = (this.bytesByOwner.get(owner) ?? 0) - gone.bytes
    if (kept.size === 0) {
      this.owners.delete(owner)
      this.bytesByOwner.delete(owner)
    } else {
      this.bytesByOwner.set(owner, left)
    }
  }
}
