import type { GatewayStore } from '../../store/gateway-store.js'
import type { Operation } from '../../types.js'
import type { LoggedEvent, StreamFollower } from './stream-log.js'

/** What another process learns of a call whose client left, from the store. */
export interface JournalHead {
  v: 1
  /** `failed`: the call ended without an answer to keep (an upstream error, a cancel before any event). */
  state: 'running' | 'done' | 'failed'
  /** Whether the call streams (its events are in the segments); a whole call only has a head. */
  stream: boolean
  /** How many event segments have been written. */
  segments: number
  /**
   * The call's operation, so a stream followed from another process is written in the framing its own client got
   * (Bedrock's InvokeModel and Converse frames share one content type); absent in a head written before it was kept.
   */
  operation?: Operation
}

/** The store names of a call's journal: its head, its event segments, and a cancel asked for elsewhere. */
export const journalNames = {
  head: (requestId: string) => `live:${requestId}`,
  segment: (requestId: string, n: number) => `live:${requestId}:${n}`,
  cancel: (requestId: string) => `cancel:${requestId}`,
}

/** How often a stream's journal writes the events that came since its last write (and resumers elsewhere read). */
export const JOURNAL_TICK_MS = 100
/** How often a journal looks for a cancel asked for elsewhere: one read per call whose client left, per interval. */
const CANCEL_POLL_MS = 1_000
/** How long a finished journal stays for resumers still reading it (later ones read the record). */
const FINISHED_JOURNAL_MS = 5 * 60_000

/** Reads a journal head; undefined when absent or not one. */
export function parseJournalHead(text: string | undefined): JournalHead | undefined {
  if (text === undefined) return undefined
  try {
    const head = JSON.parse(text) as Partial<JournalHead>
    if (head.v !== 1 || typeof head.segments !== 'number') return undefined
    // An operation this process does not know (a newer one's) is framed by default.
    if (typeof head.operation !== 'string') delete head.operation
    return head as JournalHead
  } catch {
    return undefined
  }
}

/** Where a journal writes and what it is told. */
export interface JournalOptions {
  store: GatewayStore
  owner: string
  requestId: string
  /** The call's operation, told to followers elsewhere by the head. */
  operation: Operation
  /** How long a running journal's values live: longer than the call can run. */
  ttlMs: number
  stream: boolean
  /** Called once when another process asked to cancel the call. */
  onCancel: () => void
  /** Told of a write that failed (the call goes on; resumers elsewhere then wait or fail). */
  onError: (error: unknown) => void
}

/**
 * The journal of a call whose client left, for the processes that share the store: started only then (the happy
 * path writes nothing), it writes the events so far and then, every tick, those that came since, as numbered
 * segments behind one head; it also looks for a cancel asked for elsewhere. Writes run one at a time, in order.
 * A whole call's head goes out at its first poll, not at once: a cancel elsewhere looks for it longer than that,
 * and a call that ends sooner costs the store nothing.
 */
export class Journal implements StreamFollower {
  #pending: Buffer[] = []
  #segments = 0
  #state: JournalHead['state'] = 'running'
  #writes: Promise<void> = Promise.resolve()
  #cancelSeen = false
  #cancelCheckedAt = 0
  #errorTold = false
  /** Whether anything was (or may have been) written, so that there is something to remove. */
  #touched = false
  /** What the head in the store says, so an unchanged head is not written again. */
  #written: { segments: number; state: JournalHead['state'] } | undefined
  readonly #timer: NodeJS.Timeout

  constructor(
    private readonly options: JournalOptions,
    /** The stream's bytes so far, whole events. */
    backlog: readonly Buffer[] = [],
  ) {
    for (const chunk of backlog) this.#pending.push(chunk)
    if (options.stream) this.#queue()
    this.#timer = setInterval(() => this.#queue(), options.stream ? JOURNAL_TICK_MS : CANCEL_POLL_MS)
    this.#timer.unref()
  }

  event(event: LoggedEvent): void {
    this.#pending.push(event.bytes)
  }

  /**
   * The call ended. A finished stream's rest is written and its head says so, for resumers still reading it (later
   * ones read the record); anything else has nothing to follow and its journal is removed. Resolves when written.
   */
  finish(state: 'done' | 'failed'): Promise<void> {
    clearInterval(this.#timer)
    this.#state = state
    if (state === 'done' && this.options.stream) return this.#queue()
    this.#writes = this.#writes
      .then(() => (this.#touched ? this.#remove() : undefined))
      .catch((error: unknown) => this.options.onError(error))
    return this.#writes
  }

  async #remove(): Promise<void> {
    const { store, owner, requestId } = this.options
    await store.deleteValue(owner, journalNames.head(requestId))
    for (let n = 0; n < this.#segments; n++) await store.deleteValue(owner, journalNames.segment(requestId, n))
  }

  /** `StreamFollower.end`: the events are all in; the call settles the head with `finish`. */
  end(): void {}

  #queue(): Promise<void> {
    this.#writes = this.#writes.then(() => this.#write()).catch((error: unknown) => this.#failed(error))
    return this.#writes
  }

  /** Told once per journal: a store that is down fails every tick. */
  #failed(error: unknown): void {
    if (this.#errorTold) return
    this.#errorTold = true
    this.options.onError(error)
  }

  async #write(): Promise<void> {
    const { store, owner, requestId } = this.options
    const ttl = this.#state === 'running' ? this.options.ttlMs : FINISHED_JOURNAL_MS
    const pending = this.#pending
    this.#pending = []
    // Set before the write: one that times out may still land.
    this.#touched = true
    if (pending.length > 0) {
      await store.setValue(owner, journalNames.segment(requestId, this.#segments), Buffer.concat(pending).toString('utf8'), ttl)
      this.#segments++
    }
    // What this write says, taken before it waits: a `finish` meanwhile must not be taken for written.
    const head = { segments: this.#segments, state: this.#state }
    const written = this.#written
    if (written?.segments !== head.segments || written.state !== head.state) {
      await this.#writeHead(head, ttl)
      this.#written = head
    }
    if (this.#state !== 'running' || this.#cancelSeen || Date.now() - this.#cancelCheckedAt < CANCEL_POLL_MS) return
    this.#cancelCheckedAt = Date.now()
    if ((await store.getValue(owner, journalNames.cancel(requestId))) !== undefined) {
      this.#cancelSeen = true
      this.options.onCancel()
    }
  }

  #writeHead({ segments, state }: { segments: number; state: JournalHead['state'] }, ttl: number): Promise<void> {
    const { store, owner, requestId } = this.options
    const head: JournalHead = { v: 1, state, stream: this.options.stream, segments, operation: this.options.operation }
    return store.setValue(owner, journalNames.head(requestId), JSON.stringify(head), ttl)
  }
}
