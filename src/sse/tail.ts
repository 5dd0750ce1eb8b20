import { performance } from 'node:perf_hooks'
import { type AnswerFacts, type Dialect, MAX_REASON_LENGTH, reasonList } from '../dialects/index.js'
import type { ResponseSink } from '../http/sink.js'
import { objectAfterKey, stringsAfterKey } from '../json/after-key.js'
import type { TokenCounts } from '../types.js'
import { eventData } from './parse.js'

const TAIL_BYTES = 64 * 1024

/**
 * Keeps the last few frames of a server-sent event stream, so the usage and finish reasons in its final frames can
 * be read at the end without parsing every frame on the way. A sink beside the client's: it takes chunks and never
 * asks to wait.
 */
export class StreamTail implements ResponseSink {
  private chunks: Buffer[] = []
  private size = 0
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
      this.size -= (this.chunks.shift() as Buffer).length
    }
    return true
  }

  /**
   * Usage from the last event that carries one, and why each choice stopped, from the events that say so (a later
   * event's reason for a choice wins), read in the upstream's dialect. Only events whose text names a reason are
   * parsed for it: in a chat stream every chunk carries `"finish_reason": null`. An event that outgrew the tail (a
   * Responses stream ends with the whole response, its text included) still gives the usage object at its end.
   */
  read(dialect: Dialect): AnswerFacts {
    const tail = Buffer.concat(this.chunks)
    const events = eventData(tail.toString('utf8'))
    let usage: TokenCounts | undefined
    const reasons: string[] = []
    const field = dialect.finishReasonField
    for (let i = events.length - 1; i >= 0; i--) {
      const data = events[i] as string
      const saysWhy = stringsAfterKey(data, field, 1, MAX_REASON_LENGTH).length > 0
      if ((usage !== undefined && !saysWhy) || data === '' || data === '[DONE]') continue
      let parsed: unknown
      try {
        parsed = JSON.parse(data)
      } catch {
        continue
      }
      usage ??= dialect.usage(parsed)
      if (saysWhy) {
        // Read backwards: a choice's reason already found came later in the stream and stands.
        const found: string[] = []
        dialect.finishReasons(parsed, found)
        for (let k = 0; k < found.length; k++) if (found[k] !== undefined && reasons[k] === undefined) reasons[k] = found[k] as string
      }
    }
    return { usage: usage ?? usageOfCutEvent(dialect, tail), finishReasons: reasonList(reasons) }
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
