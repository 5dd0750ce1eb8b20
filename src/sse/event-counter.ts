const LF = 0x0a
const CR = 0x0d
const DATA = Buffer.from('data:')

/**
 * Counts the events of an event stream that carry data, as its bytes go by cut anywhere: what a client's parser
 * dispatches (comments and `id`-only blocks are not events to it). Lines end at `\n` or `\r\n`, as `EventSplitter`
 * reads them.
 */
export class EventCounter {
  #count = 0
  /** Bytes of the current line so far, carriage returns left out. */
  #linePosition = 0
  /** How much of `data:` the current line starts with. */
  #matched = 0
  /** Whether the current event has a `data` line. */
  #hasData = false

  /** The events with data completed so far. */
  get count(): number {
    return this.#count
  }

  push(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number
      if (byte === LF) {
        if (this.#linePosition === 0) {
          if (this.#hasData) this.#count++
          this.#hasData = false
        } else if (this.#matched === DATA.length) this.#hasData = true
        this.#linePosition = 0
        this.#matched = 0
        continue
      }
      if (byte === CR) continue
      // Past its start, nothing in a line counts but its end: skip to it (a 30 MB event byte by byte stalled 180 ms).
      if (this.#linePosition > 0 && this.#matched < this.#linePosition) {
        const end = chunk.indexOf(LF, i)
        if (end < 0) break
        i = end - 1
        continue
      }
      if (this.#matched === this.#linePosition && this.#matched < DATA.length && byte === DATA[this.#matched]) this.#matched++
      this.#linePosition++
    }
  }
}
