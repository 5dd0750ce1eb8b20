// The writer side of a framing other than SSE, built from one function: the gateway's streams are SSE events, so a
// framing's writer splits them at their blank lines and frames each event by its `event:` name and `data:`.
import { EventSplitter } from '../../sse/split.js'
import type { FramingWriter } from './framing.js'

/** One SSE event as a framing writes it: its `event:` name (undefined without one) and its `data:` lines joined. */
export interface SseFields {
  event: string | undefined
  data: string
}

const EMPTY = Buffer.alloc(0)

/** The `event:` and `data:` fields of one whole event (`id:` lines and comments are SSE's own, and dropped). */
export function sseFields(event: Buffer): SseFields | undefined {
  let name: string | undefined
  const data: string[] = []
  for (const line of event.toString('utf8').split(/\r?\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5))
    else if (line.startsWith('event:')) name = line.slice(line[6] === ' ' ? 7 : 6)
  }
  return data.length === 0 ? undefined : { event: name, data: data.join('\n') }
}

/**
 * A framing writer that frames each whole SSE event with `frame` (an empty buffer drops it); an event without data
 * (a keep-alive comment) is dropped.
 */
export function eventFramingWriter(frame: (fields: SseFields) => Buffer): FramingWriter {
  const splitter = new EventSplitter()
  const framed = (events: readonly Buffer[]): Buffer => {
    if (events.length === 0) return EMPTY
    const out: Buffer[] = []
    for (const event of events) {
      const fields = sseFields(event)
      if (fields !== undefined) out.push(frame(fields))
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out)
  }
  return {
    write: (chunk) => framed(splitter.push(chunk)),
    end() {
      const rest = splitter.rest()
      return rest === undefined ? EMPTY : framed([rest])
    },
  }
}
