import type { GatewayStore } from '../store/gateway-store.js'
import { approxBytes } from '../store/lru-adapter.js'
import type { GatewayLogger, RecoveryRecord } from '../types.js'

/** How often the oldest held write is tried again while the store does not take it. */
const RETRY_MS = 500

/** Bounds of the writes held while the store is down. */
export interface PendingLimits {
  /** Writes held at once (`recovery.maxPendingRecords`). */
  maxRecords: number
  /** Bytes held at once, counted as memory held: two per character (`recovery.maxPendingBytes`). */
  maxBytes: number
}

/** One write the store refused, held: what it is (for the log lines) and how to make it with the ttl left. */
interface Held {
  /** What is written, as the log lines name it: `recovery record`, `the outcome of an idempotency key`. */
  what: string
  requestId: string
  /** When the value's time runs out: it is written with what is left of its ttl, or dropped once none is. */
  expiresAt: number
  bytes: number
  write(store: GatewayStore, ttlMs: number): Promise<void>
  onStored: () => void
}

const RECORD = 'recovery record'

/**
 * Writes the store refused (down past the writer's retries), held in memory oldest first and made once the store
 * takes writes again: recovery records, and the outcome of an idempotency key (its answer, or the end of its
 * claim), whose loss would leave the key claimed by a call that is over. Bounded in count and bytes: past either
 * the oldest is dropped, logged as lost with its request id. Nothing is held across a restart.
 */
export class PendingWrites {
  readonly #queue: Held[] = []
  readonly #store: () => GatewayStore
  readonly #limits: PendingLimits
  readonly #logger: GatewayLogger
  #bytes = 0
  #timer: NodeJS.Timeout | undefined
  #draining: Promise<void> | undefined
  #closed = false

  /** `store`: the store written to (asked each time, so it can be made after this). */
  constructor(store: () => GatewayStore, limits: PendingLimits, logger: GatewayLogger) {
    this.#store = store
    this.#limits = limits
    this.#logger = logger
  }

  /** Writes held now. */
  get size(): number {
    return this.#queue.length
  }

  /** Holds a record the store refused; `onStored` runs once it is written. */
  add(owner: string, record: RecoveryRecord, ttlMs: number, onStored: () => void = () => {}): void {
    this.#hold({
      what: RECORD,
      requestId: record.request_id,
      expiresAt: Date.now() + ttlMs,
      bytes: approxBytes(record),
      write: (store, ttl) => store.put(owner, record, ttl),
      onStored,
    })
  }

  /**
   * Holds an owner's single value the store refused: set to `value` for `ttlMs`, or deleted when `value` is
   * undefined. `what` names it in the log lines; `requestId` is the call it belongs to.
   */
  addValue(owner: string, name: string, value: string | undefined, ttlMs: number, what: string, requestId: string): void {
    this.#hold({
      what: `the outcome of ${what}`,
      requestId,
      expiresAt: Date.now() + ttlMs,
      bytes: approxBytes(value ?? '') + approxBytes(name),
      write: (store, ttl) => (value === undefined ? store.deleteValue(owner, name) : store.setValue(owner, name, value, ttl)),
      onStored: () => {},
    })
  }

  #hold(held: Held): void {
    if (this.#closed || held.bytes > this.#limits.maxBytes) {
      this.#lost(held, this.#closed ? 'the gateway is closing' : 'larger than recovery.maxPendingBytes')
      return
    }
    while (this.#queue.length >= this.#limits.maxRecords || this.#bytes + held.bytes > this.#limits.maxBytes) {
      const dropped = this.#shift()
      if (dropped)
        this.#lost(dropped, 'writes held while the store is down are past recovery.maxPendingRecords or recovery.maxPendingBytes')
    }
    this.#queue.push(held)
    this.#bytes += held.bytes
    this.#logger.warn(`model-gateway: ${held.what} held in memory until the store takes writes again`, {
      requestId: held.requestId,
      held: this.#queue.length,
    })
    this.#schedule()
  }

  #lost(held: Held, reason: string): void {
    this.#logger.error(`model-gateway: ${held.what} could not be stored`, { requestId: held.requestId, reason })
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
    for (let held = this.#shift(); held; held = this.#shift()) this.#lost(held, 'the store was down when the gateway closed')
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

  /** Makes the held writes oldest first, up to the first the store refuses (it stays held, first in line). */
  async #drain(): Promise<void> {
    for (let held = this.#queue[0]; held; held = this.#queue[0]) {
      const left = held.expiresAt - Date.now()
      let refused = false
      if (left > 0) {
        try {
          await held.write(this.#store(), left)
        } catch {
          // Still down: it waits, first in line. Refused by a store that answers: it would never be taken.
          if (!(await this.#store().healthy())) return
          refused = true
        }
      }
      // Taken out only now: a write is held until it is made or its time is over (unless dropped meanwhile).
      if (this.#queue[0] === held) this.#shift()
      if (left <= 0) this.#lost(held, 'its ttl ran out while the store was down')
      else if (refused) this.#lost(held, 'the store refused it once back')
      else {
        this.#logger.warn(`model-gateway: ${held.what} stored after the store came back`, { requestId: held.requestId })
        held.onStored()
      }
    }
  }
}
