import { performance } from 'node:perf_hooks'
import type { Dialect } from '../dialects/index.js'
import type { ResponseSink } from '../http/sink.js'
import { objectAfterKey } from '../json/last-object.js'
import type { TokenCounts } from '../types.js'
import { eventData } from './parse.js'

const TAIL_BYTES = 64 * 1024

/**
 * Keeps the last few frames of a server-sent event stream, so the usage in its final frames can be read at the
 * end without parsing every frame on the way. A sink beside the client's: it takes chunks and never asks to wait.
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
   * Usage from the last event that carries one, read in the upstream's dialect. An event that outgrew the tail (a
   * Responses stream ends with the whole response, its text included) still gives the usage object at its end.
   */
  usage(dialect: Dialect): TokenCounts | undefined {
    const tail = Buffer.concat(this.chunks)
    return this.usageOfEvents(dialect, tail) ?? this.usageOfCutEvent(dialect, tail)
  }

  private usageOfEvents(dialect: Dialect, tail: Buffer): TokenCounts | undefined {
    const events = eventData(tail.toString('utf8'))
    for (let i = events.length - 1; i >= 0; i--) {
      const data = events[i] as string
      if (data === '' || data === '[DONE]') continue
      let parsed: unknown
      try {
        parsed = JSON.parse(data)
      } catch {
        continue
      }
      const found = dialect.usage(parsed)
      if (found) return found
    }
    return undefined
  }

  private usageOfCutEvent(dialect: Dialect, tail: Buffer): TokenCounts | undefined {
    try {
      const usage = objectAfterKey(tail, dialect.usageField)
      return usage === undefined ? undefined : dialect.usage({ [dialect.usageField]: usage })
    } catch {
      return undefined
    }
  }
}
