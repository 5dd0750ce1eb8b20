// One background call while this process runs it: its events in memory (for readers here) and in the store (for
// readers anywhere), its status, and the lease that tells other processes it is still being run.
import type { BackgroundFormat, BackgroundStatus } from '../dialects/index.js'
import type { RecoveryStore } from '../recovery/store/recovery-store.js'
import { sseEvent } from '../sse/write.js'
import { type AbortHook, abortWith } from '../upstream/send.js'
import { type BackgroundHead, backgroundNames, hasEnded, removeCall } from './state.js'

/** How often a running call writes the events that came since its last write (readers elsewhere poll as often). */
export const BACKGROUND_TICK_MS = 100
/** How often a running call looks for a cancel or delete asked for in another process. */
const CANCEL_POLL_MS = 1_000

/** One kept event as readers get it: its data numbered `seq` (`type` and `sequence_number` first, as OpenAI writes them). */
export function keptEvent(data: Record<string, unknown>, seq: number): string {
  const { type, ...rest } = data
  return sseEvent(JSON.stringify({ type, sequence_number: seq, ...rest }), typeof type === 'string' ? type : undefined)
}

/** Someone reading a running call's events here: told each new one, and the end. */
export interface RunReader {
  event(sse: string): void
  end(): void
}

/** The bounds and lifetimes of one call. */
export interface RunLimits {
  /** How long the call's state is kept. */
  ttlMs: number
  /** How long a lease lasts; it is renewed three times within it. */
  leaseMs: number
  maxEvents: number
  maxBytes: number
}

/** Who a call is and where it is kept. */
export interface RunIdentity {
  owner: string
  requestId: string
  /** Its public id. */
  id: string
  format: BackgroundFormat
  store: RecoveryStore
  onError: (error: unknown) => void
}

/**
 * A running background call's log. Its first event is the gateway's own `created` one; the upstream's follow, each
 * numbered from there. Every tick the events that came since are written as one segment, then the head; a head is
 * also written before the lease runs out, and a cancel asked for elsewhere is looked for once a second.
 */
export class RunLog {
  readonly events: string[] = []
  status: BackgroundStatus = 'queued'
  object: Record<string, unknown>
  /** Stops the upstream call; `stopReason` says why (a cancel, a bound, a shutdown). */
  readonly hook: AbortHook = {}
  stopReason: { status: BackgroundStatus; message: string | undefined } | undefined
  #bytes = 0
  #pending: string[] = []
  #segments = 0
  #leaseUntil = 0
  #cancelCheckedAt = Date.now()
  #deleted = false
  #errorTold = false
  #writes: Promise<void> = Promise.resolve()
  #readers = new Set<RunReader>()
  #ended: Promise<void>
  #settle!: () => void
  readonly #timer: NodeJS.Timeout

  constructor(
    readonly who: RunIdentity,
    readonly limits: RunLimits,
    pending: Record<string, unknown>,
  ) {
    this.object = pending
    this.#ended = new Promise((resolve) => (this.#settle = resolve))
    this.append(who.format.createdEvent(pending))
    this.#timer = setInterval(() => this.#tick(), BACKGROUND_TICK_MS)
    this.#timer.unref()
  }

  /** The first write: the create answers only once it took, so a retrieve anywhere right after finds the call. */
  stored(): Promise<void> {
    const write = this.#write()
    this.#writes = write.catch(() => {})
    return write
  }

  /** Drops a call whose first write failed: it never started. */
  discard(): void {
    clearInterval(this.#timer)
    this.status = 'failed'
    this.#settle()
  }

  /** Resolves once the call ended and its last state is written. */
  get ended(): Promise<void> {
    return this.#ended
  }

  /** Numbers one event, keeps it, and tells the readers; past a bound the call is stopped instead. */
  append(data: Record<string, unknown>): void {
    if (hasEnded(this.status)) return
    const sse = keptEvent(data, this.events.length)
    const bytes = Buffer.byteLength(sse)
    const { maxEvents, maxBytes } = this.limits
    if (this.events.length + 1 > maxEvents || this.#bytes + bytes > maxBytes) {
      const bound = this.events.length + 1 > maxEvents ? `background.maxEvents (${maxEvents})` : `background.maxBytes (${maxBytes})`
      this.stop('failed', `The response grew past what a background response may hold: ${bound}.`)
      return
    }
    this.#bytes += bytes
    this.events.push(sse)
    this.#pending.push(sse)
    for (const reader of this.#readers) reader.event(sse)
  }

  /** The upstream answered: the call is in progress. */
  start(): void {
    if (this.status !== 'queued') return
    this.status = 'in_progress'
    this.object = this.who.format.started(this.object)
  }

  /** Stops the upstream call for `status`; the call ends once the upstream request has. */
  stop(status: BackgroundStatus, message?: string): void {
    this.stopReason ??= { status, message }
    abortWith(this.hook, new Error(message ?? status))
  }

  /**
   * Ends the call: with its upstream's final object, or (`object` undefined) with the last one in `status`, whose
   * end is then told to stream readers by the format's end event. Writes the rest, then settles `ended`.
   */
  end(status: BackgroundStatus, object: Record<string, unknown> | undefined, message?: string): Promise<void> {
    if (hasEnded(this.status)) return this.#ended
    if (object === undefined) {
      const last = this.who.format.ended(this.object, status, message)
      const told = this.who.format.endEvent(last)
      if (told) this.append(told)
      this.object = last
    } else {
      this.object = object
    }
    this.status = status
    clearInterval(this.#timer)
    for (const reader of this.#readers) reader.end()
    this.#readers.clear()
    this.#writes = this.#writes
      .then(() => (this.#deleted ? removeCall(this.who.store, this.who.owner, this.who.requestId, this.#segments) : this.#write()))
      .catch((error: unknown) => this.who.onError(error))
      .then(() => this.#settle())
    return this.#ended
  }

  /** Reads the events after `after` and those to come; returns a function that stops reading. */
  follow(after: number, reader: RunReader): () => void {
    for (let seq = after + 1; seq < this.events.length; seq++) reader.event(this.events[seq] as string)
    if (hasEnded(this.status)) {
      reader.end()
      return () => {}
    }
    this.#readers.add(reader)
    return () => this.#readers.delete(reader)
  }

  /** The call was deleted: it stops, and what was kept of it is removed instead of written again. */
  deleted(): void {
    this.#deleted = true
    this.stop('cancelled')
  }

  #tick(): void {
    const now = Date.now()
    const renew = now > this.#leaseUntil - (this.limits.leaseMs * 2) / 3
    if (this.#pending.length > 0 || renew) this.#writes = this.#writes.then(() => this.#write()).catch((error) => this.#failed(error))
    if (now - this.#cancelCheckedAt < CANCEL_POLL_MS) return
    this.#cancelCheckedAt = now
    this.#writes = this.#writes.then(() => this.#checkCancel()).catch((error) => this.#failed(error))
  }

  /** Told once per call while it runs: a store that is down fails every tick. Its last write is always told. */
  #failed(error: unknown): void {
    if (this.#errorTold) return
    this.#errorTold = true
    this.who.onError(error)
  }

  async #checkCancel(): Promise<void> {
    if (hasEnded(this.status)) return
    const { store, owner, requestId } = this.who
    const asked = await store.getValue(owner, backgroundNames.cancel(requestId))
    if (asked === 'delete') this.deleted()
    else if (asked !== undefined) this.stop('cancelled')
  }

  async #write(): Promise<void> {
    const { store, owner, requestId } = this.who
    const ttl = this.limits.ttlMs
    const pending = this.#pending
    this.#pending = []
    if (pending.length > 0) {
      await store.setValue(owner, backgroundNames.segment(requestId, this.#segments), JSON.stringify(pending), ttl)
      this.#segments++
    }
    const leaseUntil = Date.now() + this.limits.leaseMs
    const head: BackgroundHead = {
      v: 1,
      status: this.status,
      object: this.object,
      segments: this.#segments,
      events: this.events.length - this.#pending.length,
      leaseUntil,
    }
    await store.setValue(owner, backgroundNames.head(requestId), JSON.stringify(head), ttl)
    this.#leaseUntil = leaseUntil
  }
}
