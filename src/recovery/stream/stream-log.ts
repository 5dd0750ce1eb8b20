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

/** A log's first page; each next one is twice the last, up to `PAGE_BYTES`, so a short stream holds little. */
const FIRST_PAGE_BYTES = 4 * 1024
/**
 * The most one page holds (an event larger than that gets a page of its own). One buffer per event cost an object,
 * an entry and a slab share each: a stream of small events held twice its bytes and more.
 */
export const PAGE_BYTES = 64 * 1024
/** Numbers kept per event in the index: its number, its page, and where it ends in that page. */
const STRIDE = 3

/**
 * The events of one resumable stream so far, numbered as they are relayed, in this process's memory only (the happy
 * path writes nothing anywhere else). Compact: the events are copied into a few large pages, whole events each, with
 * an index of three numbers per event; the relayed bytes are views of the pages, so the log, the client's socket and
 * whoever joined the call share one copy. Bounded: the pages count against `maxBytes` and the gateway's `held` total;
 * past either it keeps nothing more (and gives its bytes back) and can no longer be resumed or kept; `onOverflow`
 * hears of it once.
 */
export class StreamLog {
  readonly #pages: Buffer[] = []
  /** Bytes used of each page. */
  readonly #filled: number[] = []
  /** Bytes of all pages, as taken from `held`. */
  #allocated = 0
  #index = new Uint32Array(64 * STRIDE)
  #count = 0
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

  /** Whether the events are all kept: false once the stream outgrew its bound (then it cannot be resumed or kept). */
  get kept(): boolean {
    return !this.#overflowed
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
    this.#pages.length = 0
    this.#filled.length = 0
    this.#index = new Uint32Array(0)
    this.#count = 0
    this.held.give(this.#allocated)
    this.#allocated = 0
    this.#bytes = 0
  }

  /** The stream's head as the client got it (status and content type). */
  get head(): ResponseHead | undefined {
    return this.#head
  }

  get ended(): boolean {
    return this.#ended
  }

  /** The kept events, views of the pages; empty once the stream outgrew its bound. */
  *events(): Generator<LoggedEvent> {
    const index = this.#index
    const pages = this.#pages
    let page = -1
    let start = 0
    for (let n = 0; n < this.#count; n++) {
      const at = n * STRIDE
      const inPage = index[at + 1] as number
      if (inPage !== page) {
        page = inPage
        start = 0
      }
      const end = index[at + 2] as number
      yield { id: index[at] as number, bytes: (pages[page] as Buffer).subarray(start, end) }
      start = end
    }
  }

  /** The kept bytes, whole events only, as a few views of the pages (one per page); empty once the stream outgrew its bound. */
  chunks(): Buffer[] {
    return this.#pages.map((page, n) => page.subarray(0, this.#filled[n]))
  }

  open(head: ResponseHead): void {
    this.#head = head
  }

  /** Numbers and keeps one whole event; returns its bytes as relayed. */
  append(event: Buffer): Buffer {
    const id = hasData(event) ? ++this.#lastId : 0
    let bytes = id === 0 ? event : this.frame(event, id)
    if (!this.#overflowed) {
      const kept = this.#keep(bytes, id)
      if (kept) bytes = kept
      else {
        this.release()
        this.#onOverflow?.()
      }
    }
    const entry: LoggedEvent = { id, bytes }
    for (const follower of this.#followers) follower.event(entry)
    return bytes
  }

  /** Copies an event into the last page (or a new one); its view there, or undefined when the bounds refuse it. */
  #keep(bytes: Buffer, id: number): Buffer | undefined {
    const last = this.#pages.at(-1)
    if (last === undefined || last.length - (this.#filled.at(-1) as number) < bytes.length) {
      // A new page: twice the last, up to a full page, at least the event, never past the log's bound.
      const want = Math.max(bytes.length, Math.min(PAGE_BYTES, last ? last.length * 2 : FIRST_PAGE_BYTES))
      const size = Math.min(want, this.maxBytes - this.#allocated)
      if (size < bytes.length || !this.held.take(size)) return undefined
      this.#pages.push(Buffer.allocUnsafeSlow(size))
      this.#filled.push(0)
      this.#allocated += size
    }
    const n = this.#pages.length - 1
    const page = this.#pages[n] as Buffer
    const start = this.#filled[n] as number
    const end = start + bytes.copy(page, start)
    this.#filled[n] = end
    this.#bytes += bytes.length
    this.#note(id, n, end)
    return page.subarray(start, end)
  }

  #note(id: number, page: number, end: number): void {
    if ((this.#count + 1) * STRIDE > this.#index.length) {
      const grown = new Uint32Array(this.#index.length * 2)
      grown.set(this.#index)
      this.#index = grown
    }
    const at = this.#count++ * STRIDE
    this.#index[at] = id
    this.#index[at + 1] = page
    this.#index[at + 2] = end
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
    for (const event of this.events()) {
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

  /** Hands `follower` the events from now on, then the end (it had the ones so far from `chunks`). */
  subscribe(follower: StreamFollower): void {
    if (this.#ended) follower.end()
    else this.#followers.add(follower)
  }

  /** The stream as relayed so far, for a record's `stream_raw`. */
  text(): string {
    return Buffer.concat(this.chunks()).toString('utf8')
  }
}
