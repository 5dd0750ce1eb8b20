import { ByteBudget } from '../../byte-budget.js'
import type { ResponseHead } from '../../http/sink.js'
import { hasData } from './events.js'

/** One event as it was relayed: its bytes (with its `id` field) and its number, 0 for an event without data. */
export interface LoggedEvent {
  id: number
  bytes: Buffer
}

/** Whoever follows a running stream: a resume request in this process, or the journal other processes read. */
export interface StreamFollower {
  event(event: LoggedEvent): void
  /** The stream ended, normally or after its error event; nothing follows. */
  end(): void
}

/**
 * Whether `event` is sent to a resume after event number `after`, given the last number seen before it: numbered
 * events after it, and events without data (comments, a separate `id` event) that follow one of those.
 */
export const isAfter = (event: LoggedEvent, after: number, seen: number) =>
  event.id > after || (event.id === 0 && (seen > after || after === 0))

/** A total that never refuses, for a log or a shared response given none. */
export const UNBOUNDED_STREAM_BYTES = new ByteBudget(Number.POSITIVE_INFINITY)

/**
 * The events of one resumable stream so far, numbered as they are relayed, in this process's memory only (the happy
 * path writes nothing anywhere else). Bounded: past `maxBytes`, or when the gateway's `held` total is spent, it keeps
 * nothing more (and gives its bytes back) and can no longer be resumed or kept; `onOverflow` hears of it once.
 */
export class StreamLog {
  readonly #events: LoggedEvent[] = []
  readonly #followers = new Set<StreamFollower>()
  #lastId = 0
  #bytes = 0
  #overflowed = false
  #ended = false
  #head: ResponseHead | undefined
  #onOverflow: (() => void) | undefined

  constructor(
    /** Adds the `id` field to an event in the client's format. */
    private readonly frame: (event: Buffer, id: number) => Buffer,
    private readonly maxBytes: number,
    private readonly held: ByteBudget = UNBOUNDED_STREAM_BYTES,
  ) {}

  /** The bytes of the events kept. */
  get bytes(): number {
    return this.#overflowed ? 0 : this.#bytes
  }

  /** Calls `listener` when the log outgrows its bound (at once if it has). */
  onOverflow(listener: () => void): void {
    if (this.#overflowed) listener()
    else this.#onOverflow = listener
  }

  /** Drops the events and gives their bytes back: the call is over, or the stream cannot be kept. */
  release(): void {
    if (this.#overflowed) return
    this.#overflowed = true
    this.#events.length = 0
    this.held.give(this.#bytes)
    this.#bytes = 0
  }

  /** The stream's head as the client got it (status and content type). */
  get head(): ResponseHead | undefined {
    return this.#head
  }

  get ended(): boolean {
    return this.#ended
  }

  /** The events, unless the stream outgrew its bound (then it cannot be resumed or kept). */
  get events(): readonly LoggedEvent[] | undefined {
    return this.#overflowed ? undefined : this.#events
  }

  open(head: ResponseHead): void {
    this.#head = head
  }

  /** Numbers and keeps one whole event; returns its bytes as relayed. */
  append(event: Buffer): Buffer {
    const entry: LoggedEvent = hasData(event) ? { id: ++this.#lastId, bytes: this.frame(event, this.#lastId) } : { id: 0, bytes: event }
    if (!this.#overflowed) {
      if (this.#bytes + entry.bytes.length <= this.maxBytes && this.held.take(entry.bytes.length)) {
        this.#bytes += entry.bytes.length
        this.#events.push(entry)
      } else {
        this.release()
        this.#onOverflow?.()
      }
    }
    for (const follower of this.#followers) follower.event(entry)
    return entry.bytes
  }

  end(): void {
    this.#ended = true
    for (const follower of this.#followers) follower.end()
    this.#followers.clear()
  }

  /**
   * Hands `follower` every event after number `after`, then the live ones, then the end. Returns a function that
   * stops following, or undefined when the stream outgrew its bound.
   */
  follow(after: number, follower: StreamFollower): (() => void) | undefined {
    if (this.#overflowed) return undefined
    let seen = 0
    for (const event of this.#events) {
      if (isAfter(event, after, seen)) follower.event(event)
      if (event.id !== 0) seen = event.id
    }
    if (this.#ended) {
      follower.end()
      return () => {}
    }
    const live: StreamFollower = {
      event: (event) => {
        if (isAfter(event, after, seen)) follower.event(event)
        if (event.id !== 0) seen = event.id
      },
      end: () => follower.end(),
    }
    this.#followers.add(live)
    return () => this.#followers.delete(live)
  }

  /** Hands `follower` the events from now on, then the end (it had the ones so far from `events`). */
  subscribe(follower: StreamFollower): void {
    if (this.#ended) follower.end()
    else this.#followers.add(follower)
  }

  /** The stream as relayed so far, for a record's `stream_raw`. */
  text(): string {
    return Buffer.concat(this.#events.map((event) => event.bytes)).toString('utf8')
  }
}
