import type { Dialect } from '../dialects/index.js'
import type { ResponseHead, ResponseSink } from '../http/sink.js'
import { EventSplitter } from '../recovery/stream/events.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import { sseEvent } from '../sse/write.js'

/** What a client is told of a stream its upstream broke off, whichever sink tells it. */
export const BROKEN_MESSAGE = 'The upstream stream broke off before its end.'
const CANCELLED_MESSAGE = 'The call was cancelled through the Recoveries API.'

/** The one event that ends a stream the upstream broke off, in the client's format. */
export function brokenStreamEvent(dialect: Dialect): Buffer {
  const body = dialect.errorBody({ status: 502, code: 'upstream_stream_broken', message: BROKEN_MESSAGE, param: undefined })
  return Buffer.from(sseEvent(JSON.stringify(body)))
}

/** The one event that ends a stream cancelled on purpose, in the client's format (for whoever resumes it). */
export function cancelledStreamEvent(dialect: Dialect): Buffer {
  const body = dialect.errorBody({ status: 499, code: 'call_cancelled', message: CANCELLED_MESSAGE, param: undefined })
  return Buffer.from(sseEvent(JSON.stringify(body)))
}

/** Whether the bytes written last end an event (a blank line, after `\n` or `\r\n` line ends). */
const endsEvent = (last: Buffer) => /\n\r?\n$/.test(last.subarray(-4).toString('latin1'))

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
      const atBoundary = last === undefined || endsEvent(last)
      inner.write(atBoundary ? brokenEvent() : Buffer.concat([Buffer.from('\n\n'), brokenEvent()]))
      inner.end()
    },
  }
}
