import { eventData } from './parse.js'
import { EventSplitter } from './split.js'

/**
 * Reads server-sent events from a byte stream that splits them anywhere: a chunk may end inside an event, a line
 * or a UTF-8 character. Holds only the unfinished event, never the stream. Events are cut as bytes and decoded
 * whole (a line break is never inside a UTF-8 character), so a large event arriving in many chunks costs its
 * length once, not once per chunk.
 */
export class SseReader {
  private readonly splitter = new EventSplitter()

  /** Bytes looked at or copied so far: what tests bound to show the work is linear. */
  get examined(): number {
    return this.splitter.examined
  }

  /** The `data` of every event the chunk completes, in order. */
  push(chunk: Buffer | string): string[] {
    const out: string[] = []
    for (const event of this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))
      out.push(...eventData(event.toString('utf8')))
    return out
  }

  /** The data of an event the stream ended without closing (a server that omits the last blank line). */
  end(): string[] {
    const rest = this.splitter.rest()?.toString('utf8') ?? ''
    return rest.trim() === '' ? [] : eventData(rest)
  }
}
