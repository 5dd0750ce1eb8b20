import type { ByteBudget } from '../byte-budget.js'
import type { ClientSink, ResponseHead, ResponseSink } from '../http/sink.js'
import { UNBOUNDED_STREAM_BYTES } from '../recovery/stream/stream-log.js'

/**
 * The most a joined client may leave unread beyond what it was handed on joining: past it, it is cut (a resumable
 * end: its events carry numbers, and it resumes from `GET /v1/recoveries/{id}/stream` after the last it read) rather
 * than have the gateway buffer the stream for it.
 */
export const JOINER_BACKLOG_BYTES = 8 * 1024 * 1024

/** Marks a response served to a request that did not cause it (a joined retry, a replay). */
export function replayedHead(head: ResponseHead): ResponseHead {
  return { status: head.status, headers: { ...head.headers, 'idempotent-replayed': 'true' } }
}

const NO_JOINERS: readonly Joiner[] = []

/** Where a resumable stream's bytes are kept already (its log): a shared response replays from it instead of a copy. */
export interface KeptStream {
  /** False once the stream outgrew its bound and nothing more is kept. */
  readonly kept: boolean
  /** The bytes so far, whole events, as written to the response. */
  chunks(): Buffer[]
}

type State = 'pending' | 'whole' | 'open' | 'ended' | 'aborted' | 'failed'

interface Joiner {
  sink: ClientSink
  settle: (error?: unknown) => void
  /** What it was handed on joining (shared chunks, not copies): its backlog may hold that much more. */
  replayed: number
  /** Where a whole answer goes when a keep-alive sent the joiner's head before it came. */
  committed: ResponseSink | undefined
}

/**
 * One running call's response as every client of that call receives it: the sink the call tees into, and the
 * place a retry joins. A joiner gets what was sent so far (the whole answer, or the stream's head and chunks),
 * then the rest live. Joiners never slow the call down, and one that does not read is cut (see `JOINER_BACKLOG_BYTES`);
 * a stream longer than `maxBytes`, or past the gateway's total of `held` stream bytes, stops being joinable.
 */
export class SharedResponse implements ResponseSink {
  #state: State = 'pending'
  /** The head as the call's own client got it; joiners get it marked replayed, built when the first one comes. */
  #head: ResponseHead | undefined
  #replayed: ResponseHead | undefined
  /** The head the call's client gets from a keep-alive before the upstream's (`headAhead`). */
  #ahead: ResponseHead | undefined
  #whole: Buffer | undefined
  #chunks: Buffer[] = []
  #bytes = 0
  #overflowed = false
  #error: unknown
  /** The resumable stream's log, when it keeps the bytes: nothing is held here then. */
  #source: KeptStream | undefined
  readonly #joiners = new Set<Joiner>()
  #onEmpty: (() => void) | undefined

  constructor(
    private readonly maxBytes: number,
    private readonly held: ByteBudget = UNBOUNDED_STREAM_BYTES,
  ) {}

  /**
   * Replays from `source` (a resumable stream's log, which keeps the same bytes as they are written here) instead of
   * holding a copy: an abandoned keyed stream held its bytes twice. Called before the response opens.
   */
  replayFrom(source: KeptStream): void {
    this.#source = source
  }

  /** Gives the held chunks back: the call is over and nobody can join it any more. */
  release(): void {
    if (this.#overflowed) return
    this.#overflowed = true
    this.held.give(this.#bytes)
    this.#chunks = []
  }

  /** Whether a client joining now can get the whole response. */
  get joinable(): boolean {
    return !this.#overflowed && this.#source?.kept !== false && this.#state !== 'aborted' && this.#state !== 'failed'
  }

  /** How many joined clients are still connected and waiting for more. */
  get audience(): number {
    return this.#joiners.size
  }

  /** The bytes of a stream that ended, or undefined (not a stream, not ended, or too long to have been kept). */
  streamed(): Buffer | undefined {
    if (this.#state !== 'ended' || this.#overflowed) return undefined
    if (!this.#source) return Buffer.concat(this.#chunks, this.#bytes)
    return this.#source.kept ? Buffer.concat(this.#source.chunks()) : undefined
  }

  /**
   * The head the call's own client gets from a keep-alive while its upstream is quiet: a joiner that waits as long
   * is kept alive behind the same head, marked replayed.
   */
  headAhead(head: ResponseHead): void {
    this.#ahead = head
  }

  /** The head a keep-alive may send a joiner before the response's own comes; undefined once that came (or none). */
  get joinerHeadAhead(): ResponseHead | undefined {
    return this.#state === 'pending' && this.#ahead ? replayedHead(this.#ahead) : undefined
  }

  /** Calls `listener` once when the last joined client leaves. */
  onEmpty(listener: () => void): void {
    this.#onEmpty = listener
  }

  complete(head: ResponseHead, body: Buffer): void {
    this.#state = 'whole'
    this.#head = head
    this.#whole = body
    for (const joiner of this.#take()) {
      // A joiner a keep-alive committed has its head already: the answer (an error) can only be its last event.
      const to = joiner.sink.openedEarly && joiner.committed ? joiner.committed : joiner.sink
      to.complete(this.#replayedHead(), body)
      joiner.settle()
    }
  }

  open(head: ResponseHead): void {
    this.#state = 'open'
    this.#head = head
    for (const { sink } of this.#joiners) sink.open(this.#replayedHead())
  }

  write(chunk: Buffer): boolean {
    if (!this.#overflowed && !this.#source) {
      if (this.#bytes + chunk.length <= this.maxBytes && this.held.take(chunk.length)) {
        this.#bytes += chunk.length
        this.#chunks.push(chunk)
      } else this.release()
    }
    for (const joiner of this.#joiners) {
      joiner.sink.write(chunk)
      if (joiner.sink.backlog > joiner.replayed + JOINER_BACKLOG_BYTES) this.#cut(joiner)
    }
    return true
  }

  /** Lets go of a joiner that does not read: its connection is cut, it resumes where it stopped. */
  #cut(joiner: Joiner): void {
    this.#joiners.delete(joiner)
    joiner.sink.cut()
    joiner.settle()
    if (this.#joiners.size === 0) this.#onEmpty?.()
  }

  end(): void {
    this.#state = 'ended'
    for (const joiner of this.#take()) {
      joiner.sink.end()
      joiner.settle()
    }
  }

  abort(error: Error): void {
    this.#state = 'aborted'
    this.#error = error
    for (const joiner of this.#take()) {
      joiner.sink.abort()
      joiner.settle()
    }
  }

  /** The call failed before any response: every joiner fails with the same error (answered in its own request). */
  fail(error: unknown): void {
    if (this.#state === 'open') {
      this.abort(error instanceof Error ? error : new Error(String(error)))
      return
    }
    if (this.#state !== 'pending') return
    this.#state = 'failed'
    this.#error = error
    for (const joiner of this.#take()) joiner.settle(error)
  }

  /**
   * Serves this response to another client: resolves once it was handed over (or that client left), rejects with the
   * call's error when the call failed before answering. `committed` takes a whole answer that comes after a
   * keep-alive sent the joiner's head (see `joinerHeadAhead`).
   */
  join(sink: ClientSink, committed?: ResponseSink): Promise<void> {
    switch (this.#state) {
      case 'failed':
        return Promise.reject(this.#error)
      case 'aborted':
        return Promise.reject(this.#error)
      case 'whole':
        sink.complete(this.#replayedHead(), this.#whole as Buffer)
        return Promise.resolve()
      case 'ended':
        this.#replayStream(sink)
        sink.end()
        return Promise.resolve()
      case 'open':
        this.#replayStream(sink)
        break
    }
    const replayed = sink.backlog
    return new Promise((resolve, reject) => {
      const joiner: Joiner = {
        sink,
        replayed,
        committed,
        settle: (error) => {
          stopWatching()
          if (error === undefined) resolve()
          else reject(error)
        },
      }
      const stopWatching = sink.watch.onGone(() => {
        this.#joiners.delete(joiner)
        resolve()
        if (this.#joiners.size === 0) this.#onEmpty?.()
      })
      this.#joiners.add(joiner)
    })
  }

  #replayStream(sink: ClientSink): void {
    sink.open(this.#replayedHead())
    for (const chunk of this.#source?.chunks() ?? this.#chunks) sink.write(chunk)
  }

  /** The head a joiner gets; only called once the head came. */
  #replayedHead(): ResponseHead {
    this.#replayed ??= replayedHead(this.#head as ResponseHead)
    return this.#replayed
  }

  #take(): readonly Joiner[] {
    if (this.#joiners.size === 0) return NO_JOINERS
    const joiners = [...this.#joiners]
    this.#joiners.clear()
    return joiners
  }
}
