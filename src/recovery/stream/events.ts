/** Whether an SSE event carries a `data` field: only those are numbered, resumed and counted by clients. */
export function hasData(event: Buffer): boolean {
  return event.indexOf('data:') === 0 || event.indexOf('\ndata:') !== -1
}

const LF_LF = Buffer.from('\n\n')
const LF_CRLF = Buffer.from('\n\r\n')

/**
 * Splits an event-stream byte stream, cut anywhere, into whole events, each with the blank line that ends it.
 * Holds only the unfinished event. Events end at `\n\n` or `\r\n\r\n` (what every upstream and translator sends).
 */
export class EventSplitter {
  #pending: Buffer | undefined

  /** The events this chunk completes, in order (views into the chunks, not copies). */
  push(chunk: Buffer): Buffer[] {
    const text = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk
    const events: Buffer[] = []
    let from = 0
    for (;;) {
      const lf = text.indexOf(LF_LF, from)
      const crlf = text.indexOf(LF_CRLF, from)
      if (lf === -1 && crlf === -1) break
      const end = crlf === -1 || (lf !== -1 && lf < crlf) ? lf + 2 : crlf + 3
      events.push(text.subarray(from, end))
      from = end
    }
    this.#pending = from === text.length ? undefined : text.subarray(from)
    return events
  }

  /** What the stream ended inside of (an event without its blank line), if anything; the splitter is empty after. */
  rest(): Buffer | undefined {
    const rest = this.#pending
    this.#pending = undefined
    return rest
  }
}

/** Splits a whole event stream (a record's `stream_raw`) into its events, a last unfinished one included. */
export function splitEvents(text: Buffer): Buffer[] {
  const splitter = new EventSplitter()
  const events = splitter.push(text)
  const rest = splitter.rest()
  if (rest && rest.length > 0) events.push(rest)
  return events
}
