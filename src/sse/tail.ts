import { performance } from 'node:perf_hooks'
import { type AnswerFacts, type Dialect, MAX_REASON_LENGTH, reasonList } from '../dialects/index.js'
import type { ResponseSink } from '../http/sink.js'
import { objectAfterKey, stringsAfterKey } from '../json/after-key.js'
import type { TokenCounts } from '../types.js'
import { eventData } from './parse.js'

const TAIL_BYTES = 64 * 1024
/** How much of a stream's start is kept: a dialect may report input usage in its first event (Anthropic's `message_start`). */
const HEAD_BYTES = 16 * 1024

/**
 * Keeps the first and the last few frames of a server-sent event stream, so the usage and finish reasons in its
 * final frames (and input usage in its first) can be read at the end without parsing every frame on the way. A sink
 * beside the client's: it takes chunks and never asks to wait.
 */
export class StreamTail implements ResponseSink {
  private chunks: Buffer[] = []
  private size = 0
  /** The stream's first chunks, up to `HEAD_BYTES`, once the tail has let go of them (else they are in `chunks`). */
  private head: Buffer[] = []
  private headSize = 0
  /** Whether the tail has let go of a chunk: the head then holds what it no longer has. */
  private dropped = false
  /** `performance.now()` at the first chunk, for time-to-first-token. */
  firstChunkAt: number | undefined

  complete(): void {}
  open(): void {}
  end(): void {}
  abort(): void {}

  /** Remembers a relayed chunk, forgetting the oldest beyond the tail size. */
  write(chunk: Buffer): boolean {
    this.firstChunkAt ??= performance.now()
    this.chunks.push(chunk)
    this.size += chunk.length
    while (this.size - (this.chunks[0] as Buffer).length >= TAIL_BYTES && this.chunks.length > 1) {
      const oldest = this.chunks.shift() as Buffer
      this.size -= oldest.length
      this.dropped = true
      if (this.headSize < HEAD_BYTES) {
        this.head.push(oldest)
        this.headSize += oldest.length
      }
    }
    return true
  }

  /**
   * Usage as the dialect's stream reader reads it from the events newest first (for most dialects, the last event
   * that carries one; the stream's first events too when the reader needs them), and why each choice stopped, from
   * the events that say so (a later event's reason for a choice wins), read in the upstream's dialect. Only events
   * whose text names a reason are parsed for it: in a chat stream every chunk carries `"finish_reason": null`. An
   * event that outgrew the tail (a Responses stream ends with the whole response, its text included) still gives the
   * usage object at its end.
   */
  read(dialect: Dialect): AnswerFacts {
    const tail = Buffer.concat(this.chunks)
    const usage = dialect.streamUsage()
    const reasons: string[] = []
    const field = dialect.finishReasonField
    const events = eventData(tail.toString('utf8'))
    for (let i = events.length - 1; i >= 0; i--) {
      const data = events[i] as string
      const saysWhy = stringsAfterKey(data, field, 1, MAX_REASON_LENGTH).length > 0
      if ((usage.complete && !saysWhy) || data === '' || data === '[DONE]') continue
      const parsed = parsedEvent(data)
      if (parsed === undefined) continue
      if (!usage.complete) usage.event(parsed)
      if (saysWhy) {
        // Read backwards: a choice's reason already found came later in the stream and stands.
        const found: string[] = []
        dialect.finishReasons(parsed, found)
        for (let k = 0; k < found.length; k++) if (found[k] !== undefined && reasons[k] === undefined) reasons[k] = found[k] as string
      }
    }
    // The reader wants older events than the tail holds: the stream's first ones (an event cut by the head's end is no JSON).
    if (!usage.complete && this.dropped) {
      const first = eventData(Buffer.concat(this.head).toString('utf8'))
      for (let i = first.length - 1; i >= 0 && !usage.complete; i--) {
        const parsed = parsedEvent(first[i] as string)
        if (parsed !== undefined) usage.event(parsed)
      }
    }
    return { usage: usage.usage() ?? usageOfCutEvent(dialect, tail), finishReasons: reasonList(reasons) }
  }
}

/** An event's JSON, or undefined for `[DONE]`, an empty event, or text that is not JSON. */
function parsedEvent(data: string): unknown {
  if (data === '' || data === '[DONE]') return undefined
  try {
    return JSON.parse(data)
  } catch {
    return undefined
  }
}

/** The usage object at the end of an event the tail holds only the end of, read by key. */
function usageOfCutEvent(dialect: Dialect, tail: Buffer): TokenCounts | undefined {
  try {
    const usage = objectAfterKey(tail, dialect.usageField)
    return usage === undefined ? undefined : dialect.usage({ [dialect.usageField]: usage })
  } catch {
    return undefined
  }
}
