import type { Dialect, ErrorFacts, OperationFormat } from '../dialects/index.js'
import type { ResponseHead, ResponseSink } from '../http/sink.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import { EventCounter } from '../sse/event-counter.js'
import { EventSplitter } from '../sse/split.js'
import { endsEvent, sseEvent } from '../sse/write.js'

/** What a client is told of a stream its upstream broke off, whichever sink tells it. */
export const BROKEN_MESSAGE = 'The upstream stream broke off before its end.'
const CANCELLED_MESSAGE = 'The call was cancelled through the Recoveries API.'

/** What a stream's early end is written from: the client's operation and dialect, and the call's request id. */
export interface EndingSource {
  format: OperationFormat
  inbound: Dialect
  requestId: string
}

/**
 * The one event that ends a stream early, in the client's operation format: broken off upstream, or cancelled on
 * purpose (for whoever resumes it). A format whose error event is numbered after the events before it has them
 * counted as the client gets them (`seen`).
 */
export class StreamEnding {
  readonly #source: EndingSource
  readonly #counter: EventCounter | undefined
  /** Takes the bytes the client gets, where the format's error event depends on them; undefined elsewhere. */
  readonly seen: ((chunk: Buffer) => void) | undefined

  constructor(source: EndingSource) {
    this.#source = source
    const counter = source.format.countsStreamEvents ? new EventCounter() : undefined
    this.#counter = counter
    this.seen = counter && ((chunk) => counter.push(chunk))
  }

  /** The event of a stream its upstream broke off. */
  broken(): Buffer {
    return this.#event({ status: 502, code: 'upstream_stream_broken', message: BROKEN_MESSAGE, param: undefined })
  }

  /** The event of a stream committed before its upstream answered (by a keep-alive) that then failed with `error`. */
  failed(error: Omit<ErrorFacts, 'requestId'>): Buffer {
    return this.#event(error)
  }

  /** The event of a stream cancelled through the Recoveries API. */
  cancelled(): Buffer {
    return this.#event({ status: 499, code: 'call_cancelled', message: CANCELLED_MESSAGE, param: undefined })
  }

  #event(error: ErrorFacts): Buffer {
    const { format, inbound, requestId } = this.#source
    const facts = { ...error, requestId }
    const event = format.streamErrorEvent
      ? format.streamErrorEvent(facts, this.#counter?.count ?? 0)
      : sseEvent(JSON.stringify(inbound.errorBody(facts)))
    return Buffer.from(event)
  }
}

/**
 * An upstream's error answer (its status and body, in the client's format) as the facts of a stream's error event:
 * the upstream's status, and the message its body carries (`error.message` in every dialect's error body).
 */
export function answeredError(status: number, body: Buffer): Omit<ErrorFacts, 'requestId'> {
  let message: unknown
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown }; message?: unknown } | null
    message = parsed?.error?.message ?? parsed?.message
  } catch {
    // Not JSON: the status says it.
  }
  return {
    status,
    code: 'upstream_error',
    message: typeof message === 'string' ? message : `The upstream answered with status ${status}.`,
    param: undefined,
  }
}

/**
 * A sink for a resumable stream in the client's format: relays whole events only, each numbered and kept in the
 * stream's log (an unfinished event waits for its end, so a resume always starts on an event boundary). A stream
 * the upstream broke off, or that was cancelled, ends with `lastEvent()` in place of the unfinished one.
 */
export function numberingSink(inner: ResponseSink, log: StreamLog, lastEvent: () => Buffer): ResponseSink {
  const splitter = new EventSplitter()
  return {
    complete: (head: ResponseHead, body: Buffer) => inner.complete(head, body),
    open(head: ResponseHead) {
      log.open(head)
      inner.open(head)
    },
    write(chunk: Buffer) {
      const events = splitter.push(chunk)
      if (events.length === 0) return true
      if (events.length === 1) return inner.write(log.append(events[0] as Buffer))
      return inner.write(Buffer.concat(events.map((event) => log.append(event))))
    },
    end() {
      // A last event the upstream did not close is still relayed as it came.
      const rest = splitter.rest()
      if (rest) inner.write(log.append(rest))
      log.end()
      inner.end()
    },
    abort() {
      splitter.rest()
      inner.write(log.append(lastEvent()))
      log.end()
      inner.end()
    },
  }
}

/**
 * A sink for a plain passthrough stream: relayed as it comes; a stream the upstream broke off ends with one error
 * event in the client's format (after a blank line when the cut fell inside an event), so SDKs raise an error
 * rather than return a cut answer as a whole one.
 */
export function endingWithError(inner: ResponseSink, brokenEvent: () => Buffer): ResponseSink {
  let last: Buffer | undefined
  return {
    complete: (head: ResponseHead, body: Buffer) => inner.complete(head, body),
    open: (head: ResponseHead) => inner.open(head),
    write(chunk: Buffer) {
      if (chunk.length > 0) last = chunk
      return inner.write(chunk)
    },
    end: () => inner.end(),
    abort() {
      // A cut inside an event is closed first, or the error event's lines would join the cut one's.
      if (last !== undefined && !endsEvent(last)) inner.write(Buffer.from('\n\n'))
      inner.write(brokenEvent())
      inner.end()
    },
  }
}

/** A sink that shows what it passes on to `see`, untouched. */
export function watchingSink(inner: ResponseSink, see: (chunk: Buffer) => void): ResponseSink {
  return {
    complete: (head: ResponseHead, body: Buffer) => inner.complete(head, body),
    open: (head: ResponseHead) => inner.open(head),
    write(chunk: Buffer) {
      see(chunk)
      return inner.write(chunk)
    },
    end: () => inner.end(),
    abort: (error: Error) => inner.abort(error),
  }
}
