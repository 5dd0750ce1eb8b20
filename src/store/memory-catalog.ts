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

/**
 * Records that left the store before their time, and why: one report per trim (a Redis owner past its record limit
 * may lose hundreds at once), so whoever logs it writes one line with a count, never one per record.
 */
export interface Eviction {
  owner: string
  /** Oldest first. */
  requestIds: string[]
  reason: 'owner_record_limit' | 'owner_byte_limit' | 'memory_full'
}

interface Kept {
  entry: CatalogEntry
  bytes: number
}

/** How full the whole memory store is, as its byte bound counts. */
export interface MemoryRoom {
  /** The store's byte bound. */
  readonly capacity: number
  /** Bytes it holds now, every value included. */
  used(): number
}

const OVER_QUOTA = 'The value is past '

/** The refusal of a counted value past what its owner may keep. */
const overQuota = (what: string) => storeUnavailable(`${OVER_QUOTA}${what}: the owner's running state alone fills it.`)

/** Whether a write was refused because its owner's running state alone fills its quota or share of the store. */
export const isOverQuota = (error: unknown) => error instanceof Error && error.message.startsWith(OVER_QUOTA)

/**
 * What a record costs the store beyond the bytes counted for its values: three keys and Keyv's `{ value, expires }`
 * wrapper around each value. An over-estimate, so the store's own bound (which would take the oldest record of
 * anyone) is not reached before fair-share eviction has made room.
 */
const RECORD_OVERHEAD = 1024

/**
 * The per-owner catalog of the default in-memory store, held in plain maps beside the LRU instead of as an
 * array value inside it: adding or removing a record is O(1) (rewriting a 12 000-entry array per capture stalled
 * the loop for seconds), and each owner is held to its own record and byte quota, evicting its own oldest first,
 * so one owner's burst can never push out another's records. When the whole store is full (three owners at half the
 * store each would overfill it), room is made from the owners furthest over their fair share (the store's bound
 * divided by the owners holding records), oldest first, before the store's own bound would take the oldest record
 * of anyone. Every eviction is reported with its request ids.
 */
export class MemoryCatalog implements OwnerCatalog {
  private readonly owners = new Map<string, Map<string, Kept>>()
  /** Records' bytes and counted values' bytes (a background call's state), by owner. */
  private readonly bytesByOwner = new Map<string, number>()
  /** The values counted against their owner's quota (`putValue`), by owner then key: their bytes. */
  private readonly values = new Map<string, Map<string, number>>()

  constructor(
    private readonly keyv: Keyv,
    private readonly limits: OwnerLimits,
    private readonly onEvict: (eviction: Eviction) => void,
    private readonly room?: MemoryRoom,
  ) {}

  async ready(): Promise<void> {}

  async put(owner: string, entry: CatalogEntry, ttlMs: number, record: { bytes: number; values: RecordValue[] }): Promise<void> {
    await this.makeRoom(owner, record.bytes + RECORD_OVERHEAD)
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
    const dropped: Record<'owner_record_limit' | 'owner_byte_limit', string[]> = { owner_record_limit: [], owner_byte_limit: [] }
    try {
      while (kept.size > this.limits.maxRecords || (this.bytesByOwner.get(owner) ?? 0) > this.limits.maxBytes) {
        const oldest = kept.keys().next().value as string
        const reason = kept.size > this.limits.maxRecords ? 'owner_record_limit' : 'owner_byte_limit'
        await this.drop(owner, oldest)
        if (oldest === entry.request_id)
          throw storeUnavailable(`The recovery record is larger than an owner's quota (${this.limits.maxBytes} bytes).`)
        dropped[reason].push(oldest)
      }
    } finally {
      for (const reason of ['owner_record_limit', 'owner_byte_limit'] as const)
        if (dropped[reason].length > 0) this.onEvict({ owner, requestIds: dropped[reason], reason })
    }
  }

  /**
   * Frees `needed` bytes when the store would overflow, taking the oldest records of the owner furthest over its fair
   * share (the writer included, counting what it writes) until it fits or nobody is over it; the store's own bound
   * handles what is left.
   */
  private async makeRoom(writer: string, needed: number): Promise<void> {
    const room = this.room
    if (!room) return
    const taken = new Map<string, string[]>()
    try {
      while (room.used() + needed > room.capacity) {
        const holders = this.bytesByOwner.size + (this.bytesByOwner.has(writer) ? 0 : 1)
        const fair = room.capacity / holders
        let victim: string | undefined
        let most = 0
        for (const [owner, bytes] of this.bytesByOwner) {
          const over = bytes + (owner === writer ? needed : 0) - fair
          if (over > most) {
            most = over
            victim = owner
          }
        }
        const oldest = victim === undefined ? undefined : (this.owners.get(victim)?.keys().next().value as string | undefined)
        // A writer furthest over its share with nothing left to drop but running state is refused, before the
        // store's own bound takes the oldest value of anyone.
        if (victim === writer && oldest === undefined) throw overQuota('its fair share of the store')
        if (victim === undefined || oldest === undefined) return
        await this.drop(victim, oldest)
        taken.set(victim, [...(taken.get(victim) ?? []), oldest])
      }
    } finally {
      for (const [owner, requestIds] of taken) this.onEvict({ owner, requestIds, reason: 'memory_full' })
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
    this.values.clear()
    this.bytesByOwner.clear()
  }

  /** Called when the whole store's byte bound pushed a record's detail out: the catalog forgets it and reports it. */
  evicted(owner: string, requestId: string): void {
    if (!this.owners.get(owner)?.has(requestId)) return
    this.forget(owner, requestId)
    this.onEvict({ owner, requestIds: [requestId], reason: 'memory_full' })
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
    if (kept.size === 0) this.owners.delete(owner)
    this.addBytes(owner, -gone.bytes)
  }

  private addBytes(owner: string, bytes: number): void {
    const left = (this.bytesByOwner.get(owner) ?? 0) + bytes
    if (left <= 0 && !this.owners.has(owner) && !this.values.has(owner)) this.bytesByOwner.delete(owner)
    else this.bytesByOwner.set(owner, Math.max(0, left))
  }

  /**
   * Writes one of an owner's values counted against its quota (a background call's head, object and segments):
   * room is made as for a record, and past the owner's quota its own oldest records go first. Refused (and not
   * kept) when the owner's quota or fair share holds nothing more to drop but such values.
   */
  async putValue(owner: string, key: string, bytes: number, write: () => Promise<void>): Promise<void> {
    this.forgetValue(owner, key)
    await this.makeRoom(owner, bytes)
    await write()
    let kept = this.values.get(owner)
    if (!kept) {
      kept = new Map()
      this.values.set(owner, kept)
    }
    kept.set(key, bytes)
    this.addBytes(owner, bytes)
    const dropped: string[] = []
    try {
      while ((this.bytesByOwner.get(owner) ?? 0) > this.limits.maxBytes) {
        const oldest = this.owners.get(owner)?.keys().next().value as string | undefined
        if (oldest === undefined) {
          this.forgetValue(owner, key)
          await this.keyv.delete(key)
          throw overQuota(`an owner's quota (${this.limits.maxBytes} bytes)`)
        }
        await this.drop(owner, oldest)
        dropped.push(oldest)
      }
    } finally {
      if (dropped.length > 0) this.onEvict({ owner, requestIds: dropped, reason: 'owner_byte_limit' })
    }
  }

  /** A counted value was deleted, expired or pushed out: its bytes no longer count. */
  forgetValue(owner: string, key: string): void {
    const kept = this.values.get(owner)
    const bytes = kept?.get(key)
    if (!kept || bytes === undefined) return
    kept.delete(key)
    if (kept.size === 0) this.values.delete(owner)
    this.addBytes(owner, -bytes)
  }
}
