import type { GatewayLogger, RecoveryRecord } from '../types.js'
import { approxBytes } from './store/lru-adapter.js'
import type { RecoveryStore } from './store/recovery-store.js'

/** How often the oldest held record is tried again while the store does not take it. */
const RETRY_MS = 500

/** Bounds of the records held while the store is down. */
export interface PendingLimits {
  /** Records held at once (`recovery.maxPendingRecords`). */
  maxRecords: number
  /** Bytes held at once, counted as memory held: two per character (`recovery.maxPendingBytes`). */
  maxBytes: number
}

interface Held {
  owner: string
  record: RecoveryRecord
  /** When the record's time runs out: it is written with what is left of its ttl, or dropped once none is. */
  expiresAt: number
  bytes: number
  onStored: () => void
}

const LOST = 'model-gateway: recovery record could not be stored'

/**
 * Records the writer could not store (the store refused them past its retries: Redis down), held in memory, oldest
 * first, and written once the store takes writes again. Bounded in count and bytes: past either the oldest is
 * dropped, logged as lost with its request id. Nothing is held across a restart.
 */
export class PendingRecords {
  readonly #queue: Held[] = []
  readonly #store: () => RecoveryStore
  readonly #limits: PendingLimits
  readonly #logger: GatewayLogger
  #bytes = 0
  #timer: NodeJS.Timeout | undefined
  #draining: Promise<void> | undefined
  #closed = false

  /** `store`: the store records are written to (asked each time, so it can be made after this). */
  constructor(store: () => RecoveryStore, limits: PendingLimits, logger: GatewayLogger) {
    this.#store = store
    this.#limits = limits
    this.#logger = logger
  }

  /** Records held now. */
  get size(): number {
    return this.#queue.length
  }

  /** Holds a record the store refused; `onStored` runs once it is written. */
  add(owner: string, record: RecoveryRecord, ttlMs: number, onStored: () => void = () => {}): void {
    const bytes = approxBytes(record)
    const requestId = record.request_id
    if (this.#closed || bytes > this.#limits.maxBytes) {
      this.#logger.error(LOST, { requestId, reason: this.#closed ? 'the gateway is closing' : 'larger than recovery.maxPendingBytes' })
      return
    }
    while (this.#queue.length >= this.#limits.maxRecords || this.#bytes + bytes > this.#limits.maxBytes) {
      const dropped = this.#shift()
      this.#logger.error(LOST, {
        requestId: dropped?.record.request_id,
        reason: 'records held while the store is down are past recovery.maxPendingRecords or recovery.maxPendingBytes',
      })
    }
    this.#queue.push({ owner, record, expiresAt: Date.now() + ttlMs, bytes, onStored })
    this.#bytes += bytes
    this.#logger.warn('model-gateway: recovery record held in memory until the store takes writes again', {
      requestId,
      held: this.#queue.length,
    })
    this.#schedule()
  }

  /**
   * Writes what is held while the store takes it (for `close()`), then logs whatever is still held as lost: nothing
   * is held past the gateway's end.
   */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#draining
    await this.#drain()
    for (let held = this.#shift(); held; held = this.#shift()) {
      this.#logger.error(LOST, { requestId: held.record.request_id, reason: 'the store was down when the gateway closed' })
    }
  }

  #shift(): Held | undefined {
    const held = this.#queue.shift()
    if (held) this.#bytes -= held.bytes
    return held
  }

  #schedule(): void {
    if (this.#timer || this.#draining || this.#closed || this.#queue.length === 0) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#draining = this.#drain().finally(() => {
        this.#draining = undefined
        this.#schedule()
      })
    }, RETRY_MS)
    this.#timer.unref()
  }

  /** Writes the held records oldest first, up to the first the store refuses (it stays held, first in line). */
  async #drain(): Promise<void> {
    for (let held = this.#queue[0]; held; held = this.#queue[0]) {
      const left = held.expiresAt - Date.now()
      if (left > 0) {
        try {
          await this.#store().put(held.owner, held.record, left)
        } catch {
          return
        }
      }
      // Taken out only now: a record is held until it is written or its time is over.
      if (this.#queue[0] === held) this.#shift()
      const requestId = held.record.request_id
      if (left <= 0) this.#logger.error(LOST, { requestId, reason: 'its ttl ran out while the store was down' })
      else {
        this.#logger.warn('model-gateway: recovery record stored after the store came back', { requestId })
        held.onStored()
      }
    }
  }
}
