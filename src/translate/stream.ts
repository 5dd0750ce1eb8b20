import { SseReader } from '../sse/reader.js'
import { sseEvent } from '../sse/write.js'
import type { TokenCounts } from '../types.js'
import type { SseOut, StreamDecoder, StreamEncoder } from './format.js'
import { type HubUsage, tokenCounts } from './hub.js'

const sse = (out: SseOut): string => (typeof out === 'string' ? sseEvent(out) : sseEvent(out.data, out.event))

/**
 * Translates one upstream event stream into the client's format as it arrives: each upstream event becomes zero
 * or more client events at once, and only what a client event cannot yet say is held (a function call's
 * arguments for a Gemini client, the usage and `[DONE]` for a chat client until `end`).
 */
export class StreamTranslator {
  private readonly reader = new SseReader()
  private lastUsage: HubUsage | undefined

  constructor(
    private readonly decoder: StreamDecoder,
    private readonly encoder: StreamEncoder,
  ) {}

  /** Takes raw upstream bytes, split anywhere; returns the SSE text to write to the client (possibly empty). */
  write(chunk: Buffer | string): string {
    let out = ''
    for (const data of this.reader.push(chunk)) out += this.event(data)
    return out
  }

  /** Takes the `data` of one upstream event; returns the SSE text to write to the client (possibly empty). */
  event(data: string): string {
    const events = this.decoder.event(data)
    for (const event of events) if (event.type === 'usage') this.lastUsage = event.usage
    let out = ''
    for (const payload of this.encoder.events(events)) out += sse(payload)
    return out
  }

  /** Call when the upstream stream ended: returns the client's closing events. */
  end(): string {
    let out = ''
    for (const data of this.reader.end()) out += this.event(data)
    for (const payload of this.encoder.end()) out += sse(payload)
    return out
  }

  /**
   * Call instead of `end` when the upstream stream broke off: returns one error event in the client's format and
   * nothing after it (no `[DONE]`), so the client cannot take the cut answer for a whole one.
   */
  fail(status: number, message: string): string {
    let out = ''
    for (const payload of this.encoder.events([{ type: 'error', status, error: { message, code: undefined, param: undefined } }]))
      out += sse(payload)
    return out
  }

  /** The upstream's token counts so far (its last report), in the gateway's terms. */
  usage(): TokenCounts | undefined {
    return this.lastUsage && tokenCounts(this.lastUsage)
  }
}
