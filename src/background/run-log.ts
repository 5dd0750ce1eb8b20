// One background call while this process runs it: its events in memory (for readers here) and in the store (for
// readers anywhere), its status, and the lease that tells other processes it is still being run.
import type { BackgroundStatus } from '../dialects/index.js'
import { isOverQuota } from '../store/memory-catalog.js'
import { type AbortHook, abortWith } from '../upstream/send.js'
import { keptEvent, objectSpan, segmentLength } from './kept-event.js'
import { resumeEvery } from './lapse.js'
import { failedEnd, failedObject, OVER_QUOTA_MESSAGE, retriedWhileDown } from './last-write.js'
import type { RunIdentity, RunLimits, RunReader } from './run-identity.js'
import { type BackgroundHead, backgroundNames, DELETE_MARK, hasEnded, removeCall, STOPPED_MESSAGE } from './state.js'

/** How often a running call writes the events that came since its last write (readers elsewhere poll as often). */
export const BACKGROUND_TICK_MS = 100
/** How often a running call looks for a cancel or delete asked for in another process. */
const CANCEL_POLL_MS = 1_000
/**
 * The most bytes of events one segment holds (one event larger than this is a segment alone): a reader elsewhere
 * holds one segment at a time while its client takes it, so a stalled reader holds a slice of the call, not all of it.
 */
const SEGMENT_BYTES = 1024 * 1024
/** A call's state counts against its owner's quota, as its records do. */
const COUNTED = { counted: true }
/** What the holder of a call readers gave up logs: it stops, and writes nothing more. */
const GIVEN_UP_ERROR =
  'other processes gave this background response up while this process could not reach the store for longer than its lease; it stops and writes nothing more'

/** What the created event's place in `events` holds once it was let go (`RunLog.event`): no kept event is empty. */
const LET_GO = ''

/**
 * A running background call's log. Its first event is the gateway's own `created` one; the upstream's follow, each
 * numbered from there. Every tick the events that came since are written as one segment, then the head; a head is
 * also written before the lease runs out, and a cancel asked for elsewhere is looked for once a second. Events stay
 * pending until their segment took: a write that failed (the store down) is tried again on the next tick, so what
 * is kept has no hole, and the last write is tried again until it takes, for as long as the state would be kept.
 * After a spell without writes long enough for its lease to have passed, the first write asks the store who settled
 * that lease (lapse.ts): it resumes as the only writer, or, given up by readers, stops and writes nothing more.
 */
export class RunLog {
  readonly events: string[] = []
  status: BackgroundStatus = 'queued'
  #object: Record<string, unknown>
  /** The object as created: what readers show a call given up from (with the status last written). */
  #created: Record<string, unknown>
  /**
   * The created event was written from the request's bytes (`createdFromBytes`): `#created` holds stand-ins until
   * read whole from that event (`#whole`), and the event is never let go, since written again it could differ.
   */
  readonly #fromBytes: boolean
  /** `#created` still holds stand-ins. */
  #standIns: boolean
  /** Where the created event's text holds the created object's JSON. */
  readonly #createdAt: [number, number] | undefined
  #statusWritten: BackgroundStatus = 'queued'
  /** Readers gave the call up while its lease had passed (lapse.ts): nothing more is written. */
  #givenUp = false
  /**
   * The sequence number of the event that carries the object (the created one, then the one that ended the call):
   * the store keeps the object there only, since it echoes the request (megabytes of instructions).
   */
  #objectSeq: number | undefined = 0
  /** The object last written apart, for an end no event carries. */
  #objectWritten: Record<string, unknown> | undefined
  /** The data of the last event appended. */
  #lastData: Record<string, unknown> | undefined
  /** The sequence number of the first event of each segment written. */
  readonly #segmentFirst: number[] = []
  #written = 0
  /** Stops the upstream call; `stopReason` says why (a cancel, a bound, a shutdown). */
  readonly hook: AbortHook = {}
  stopReason: { status: BackgroundStatus; message: string | undefined } | undefined
  #bytes = 0
  #pending: string[] = []
  #segments = 0
  #leaseUntil = 0
  /**
   * The leases of head writes since the last confirmed one whose answer was lost: such a write may have landed, and
   * a reader may then judge the call by its lease, not by `#leaseUntil`.
   */
  readonly #leasesUnconfirmed = new Set<number>()
  #cancelCheckedAt = Date.now()
  #deleted = false
  #errorTold = false
  /** The store refused its events past its owner's quota: those not written are lost, and its end says why. */
  #overQuota = false
  #started = false
  #writes: Promise<void> = Promise.resolve()
  #readers = new Set<RunReader>()
  #ended: Promise<void>
  #settle!: () => void
  readonly #timer: NodeJS.Timeout

  constructor(
    readonly who: RunIdentity,
    readonly limits: RunLimits,
    pending: Record<string, unknown>,
    createdText?: string,
  ) {
    this.#object = pending
    this.#created = pending
    this.#fromBytes = createdText !== undefined
    this.#standIns = this.#fromBytes
    this.#ended = new Promise((resolve) => (this.#settle = resolve))
    const created = who.format.createdEvent(pending)
    this.#add(createdText ?? keptEvent(created, 0), created)
    this.#createdAt = objectSpan(this.events[0] as string, created, pending, 0)
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

  /** The call's object as a retrieve shows it. */
  get object(): Record<string, unknown> {
    const object = this.#whole(this.#object)
    return this.status === 'in_progress' ? this.who.format.started(object) : object
  }

  /**
   * `object` itself, unless it is the created object with stand-ins (`#fromBytes`): that is read once from the
   * created event's text, where it lies whole, and is the created object from then on.
   */
  #whole(object: Record<string, unknown>): Record<string, unknown> {
    const at = this.#createdAt
    if (!this.#standIns || object !== this.#created || at === undefined) return object
    const whole = JSON.parse((this.events[0] as string).slice(at[0], at[1])) as Record<string, unknown>
    if (this.#object === this.#created) this.#object = whole
    this.#created = whole
    this.#standIns = false
    return whole
  }

  /**
   * The JSON text of `object` while it is the object as created (the call still queued): a slice of the created
   * event's text, which holds it, so a create's answer costs no copy of the megabytes it echoes. Else undefined.
   */
  get objectText(): string | undefined {
    const at = this.#createdAt
    const sse = this.events[0] as string
    if (this.status !== 'queued' || this.#object !== this.#created || at === undefined || sse === LET_GO) return undefined
    return sse.slice(at[0], at[1])
  }

  /**
   * Event `seq` as readers get it. The created event, which echoes the request (megabytes of instructions), is let
   * go once a store outside this process holds it (`#write`): a reader here gets it written again from the object it
   * was written from, the same text to the byte.
   */
  event(seq: number): string {
    const sse = this.events[seq] as string
    return seq === 0 && sse === LET_GO ? keptEvent(this.who.format.createdEvent(this.#created), 0) : sse
  }

  /** Resolves once the call ended and its last state is written. */
  get ended(): Promise<void> {
    return this.#ended
  }

  /** Numbers one event, keeps it, and tells the readers; past a bound the call is stopped instead. */
  append(data: Record<string, unknown>): void {
    if (hasEnded(this.status)) return
    this.#add(keptEvent(data, this.events.length), data)
  }

  /** Keeps `sse`, the text of the event `data`, numbered next. */
  #add(sse: string, data: Record<string, unknown>): void {
    const bytes = Buffer.byteLength(sse)
    const { maxEvents, maxBytes } = this.limits
    if (this.events.length + 1 > maxEvents || this.#bytes + bytes > maxBytes) {
      const bound = this.events.length + 1 > maxEvents ? `background.maxEvents (${maxEvents})` : `background.maxBytes (${maxBytes})`
      this.stop('failed', `The response grew past what a background response may hold: ${bound}.`)
      return
    }
    this.#bytes += bytes
    this.#lastData = data
    this.events.push(sse)
    this.#pending.push(sse)
    for (const reader of this.#readers) reader.event(sse)
  }

  /** The upstream answered: the call is in progress (and an end given here shows it so first). */
  start(): void {
    this.#started = true
    // The object is unchanged but for its status, which the head carries: nothing more to write.
    if (this.status === 'queued') this.status = 'in_progress'
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
      // What the quota refused is not kept: the kept events end with the failure that names it instead.
      if (this.#overQuota) this.#pending.length = 0
      const before = this.events.length
      if (told) this.append(told)
      this.#objectSeq = told && this.events.length > before && this.who.format.objectOf(told) === last ? before : undefined
      this.#object = last
    } else {
      this.#object = object
      const carried = this.#lastData && this.who.format.objectOf(this.#lastData) === object
      this.#objectSeq = carried ? this.events.length - 1 : undefined
    }
    this.status = status
    clearInterval(this.#timer)
    for (const reader of this.#readers) reader.end()
    this.#readers.clear()
    this.#writes = this.#writes.then(() => this.#writeEnd()).then(() => this.#settle())
    return this.#ended
  }

  /** Writes the state the call ended with (tried again while the store is down), or removes a deleted call. */
  async #writeEnd(): Promise<void> {
    const { store, owner, requestId } = this.who
    const write = () => (this.#deleted ? removeCall(store, owner, requestId, this.#segments) : this.#write())
    try {
      await retriedWhileDown(write, this.limits, BACKGROUND_TICK_MS, (error) => this.#failed(error))
    } catch (error) {
      if (isOverQuota(error) && !this.#deleted) await this.#endOverQuota(error)
      else this.who.onError(error)
    }
  }

  /**
   * The last write was refused past the owner's quota (the whole answer came before a tick wrote it): the store showed
   * the call running until readers gave it up. It ends `failed` saying why, as when stopped by the quota while it
   * ran; refused even that, it is removed, never left running.
   */
  async #endOverQuota(error: unknown): Promise<void> {
    this.#failed(error)
    this.#pending.length = 0
    const end = failedEnd(this.who.format, this.#whole(this.#created), this.#started, OVER_QUOTA_MESSAGE, this.events.length)
    this.#objectSeq = end.told?.carriesObject ? this.events.length : undefined
    if (end.told) {
      this.events.push(end.told.sse)
      this.#pending.push(end.told.sse)
      this.#lastData = end.told.data
    }
    this.#object = end.object
    this.status = 'failed'
    try {
      await this.#write()
    } catch (refused) {
      this.who.onError(refused)
      await removeCall(this.who.store, this.who.owner, this.who.requestId, this.#segments).catch(() => {})
    }
  }

  /** Reads the events after `after` and those to come; returns a function that stops reading. */
  follow(after: number, reader: RunReader): () => void {
    for (let seq = after + 1; seq < this.events.length; seq++) reader.event(this.event(seq))
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
    // A store outside this process holds the created event since the first write, and the create, which answers in
    // the same turn as that write took, has answered with its object (a slice of it): kept here too, it was a second
    // copy of the request for the call's life. The in-memory store keeps this very string, so it stays; so does one
    // written from the request's bytes, which written again from its object could differ from what others read.
    if (this.#written > 0 && this.events[0] !== LET_GO && this.who.store.shared && !this.#fromBytes) this.events[0] = LET_GO
    // Deleted: nothing more is written, and what was is removed once it stopped.
    if (this.#deleted || this.#givenUp) return
    const now = Date.now()
    const renew = now > this.#leaseUntil - (this.limits.leaseMs * 2) / 3
    if (this.#pending.length > 0 || renew) this.#writes = this.#writes.then(() => this.#write()).catch((error) => this.#failed(error))
    if (now - this.#cancelCheckedAt < CANCEL_POLL_MS) return
    this.#cancelCheckedAt = now
    this.#writes = this.#writes.then(() => this.#checkCancel()).catch((error) => this.#failed(error))
  }

  /** Told once per call while it runs: a store that is down fails every tick. Its last write is always told. */
  #failed(error: unknown): void {
    // Past what its owner may keep: it stops, as past its own bounds, rather than push out another owner's state.
    if (isOverQuota(error)) {
      this.#overQuota = true
      this.stop('failed', OVER_QUOTA_MESSAGE)
    }
    if (this.#errorTold) return
    this.#errorTold = true
    this.who.onError(error)
  }

  async #checkCancel(): Promise<void> {
    if (hasEnded(this.status)) return
    const { store, owner, requestId } = this.who
    const asked = await store.getValue(owner, backgroundNames.cancel(requestId))
    if (asked === DELETE_MARK) this.deleted()
    else if (asked !== undefined) this.stop('cancelled')
  }

  /**
   * Before a write after a spell long enough for the lease to have passed for a reader: resumes the call as its only
   * writer, or (false) finds it given up, and then stops it with the words its readers saw, writing nothing more.
   */
  async #mayWrite(): Promise<boolean> {
    if (this.#givenUp) return false
    const leases = this.#leaseUntil === 0 ? [...this.#leasesUnconfirmed] : [this.#leaseUntil, ...this.#leasesUnconfirmed]
    if (leases.length === 0 || Date.now() <= Math.min(...leases) - this.limits.leaseMs / 3) return true
    const { store, owner, requestId } = this.who
    const held = await resumeEvery({ store, owner, requestId }, leases, this.limits)
    if (held !== undefined) {
      this.#leaseUntil = held
      this.#leasesUnconfirmed.clear()
      return true
    }
    this.#givenUp = true
    this.#pending.length = 0
    this.who.onError(new Error(GIVEN_UP_ERROR))
    if (!hasEnded(this.status)) this.stop('failed', STOPPED_MESSAGE)
    else {
      // Ended here while cut off: its readers elsewhere saw it fail, and so does a reader here from now on.
      const started = this.#statusWritten === 'in_progress'
      this.#object = failedObject(this.who.format, this.#whole(this.#created), started, STOPPED_MESSAGE)
      this.status = 'failed'
    }
    return false
  }

  /** The segment that holds event `seq` (written already): the created event's, or one near the end. */
  #segmentOf(seq: number): number {
    let n = this.#segmentFirst.length - 1
    while (n > 0 && (this.#segmentFirst[n] as number) > seq) n--
    return n
  }

  async #write(): Promise<void> {
    if (!(await this.#mayWrite())) return
    const { store, owner, requestId } = this.who
    const ttl = this.limits.ttlMs
    // What is written is what is known now: an end that comes during the writes is the next write's.
    const { status } = this
    const object = this.#object
    const objectSeq = this.#objectSeq
    // Taken off `#pending` only once written: a failed write leaves them for the next.
    let count = this.#pending.length
    while (count > 0) {
      const take = segmentLength(this.#pending, count, SEGMENT_BYTES)
      // One event alone (a created or final one of megabytes) is kept as it is, not copied.
      const segment = take === 1 ? (this.#pending[0] as string) : this.#pending.slice(0, take).join('')
      await store.setValue(owner, backgroundNames.segment(requestId, this.#segments), segment, ttl, COUNTED)
      this.#pending.splice(0, take)
      this.#segments++
      this.#segmentFirst.push(this.#written)
      this.#written += take
      count -= take
    }
    if (objectSeq === undefined && this.#objectWritten !== object) {
      await store.setValue(owner, backgroundNames.object(requestId), JSON.stringify(this.#whole(object)), ttl, COUNTED)
      this.#objectWritten = object
    }
    const leaseUntil = Date.now() + this.limits.leaseMs
    const head: BackgroundHead = {
      v: 2,
      status,
      segments: this.#segments,
      events: this.#written,
      leaseUntil,
    }
    if (objectSeq !== undefined) head.objectAt = { seq: objectSeq, segment: this.#segmentOf(objectSeq) }
    this.#leasesUnconfirmed.add(leaseUntil)
    await store.setValue(owner, backgroundNames.head(requestId), JSON.stringify(head), ttl, COUNTED)
    this.#leasesUnconfirmed.clear()
    this.#leaseUntil = leaseUntil
    this.#statusWritten = status
  }
}
