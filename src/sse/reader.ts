import { StringDecoder } from 'node:string_decoder'
import { eventData } from './parse.js'

/**
 * Reads server-sent events from a byte stream that splits them anywhere: a chunk may end inside an event, a line
 * or a UTF-8 character. Holds only the unfinished event, never the stream.
 */
export class SseReader {
  private readonly decoder = new StringDecoder('utf8')
  private pending = ''

  /** The `data` of every event the chunk completes, in order. */
  push(chunk: Buffer | string): string[] {
    // Only the new text (and the few characters before it a boundary may straddle) is searched for the blank line
    // that ends an event, so one large event arriving in many chunks is not rescanned each time.
    const from = Math.max(0, this.pending.length - 3)
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk)
    if (this.pending.indexOf('\n\n', from) < 0 && this.pending.indexOf('\n\r\n', from) < 0) return []
    const cut = Math.max(this.pending.lastIndexOf('\n\n') + 2, this.pending.lastIndexOf('\n\r\n') + 3)
    const complete = this.pending.slice(0, cut)
    this.pending = this.pending.slice(cut)
    return eventData(complete)
  }

  /** The data of an event the stream ended without closing (a server that omits the last blank line). */
  end(): string[] {
    const rest = this.pending + this.decoder.end()
    this.pending = ''
    return rest.trim() === '' ? [] : eventData(rest)
  }
}
