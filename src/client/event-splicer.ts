const LF = 10
const CR = 13
/** `data:` as bytes: a line is a data field when it starts with it, or is exactly `data`. */
const DATA = [100, 97, 116, 97, 58]

/**
 * Cuts a server-sent event stream at event boundaries and counts the events that carry a `data` field, the way the
 * gateway numbers them for a resume (`Last-Event-ID`). Only complete events are passed on: a partial one is held
 * until its blank line arrives and dropped when the source is cut, so the events of a resume follow on exactly.
 * Lines may end in LF, CRLF or CR (also split across chunks); an event ending in a CR is held until the next byte
 * says whether an LF belongs to it.
 */
export class EventSplicer {
  #count = 0
  #held: Uint8Array[] = []
  #eventHasData = false
  #lineLength = 0
  /** How many bytes of `data:` the current line matched so far; -1 once it cannot be a data field. */
  #dataMatch = 0
  #afterCR = false
  /** The last CR ended an empty line: the event is over, its end waits for the next byte (an LF of a CRLF or not). */
  #pendingEnd = false

  /** Complete data-bearing events passed on so far. */
  get count(): number {
    return this.#count
  }

  /** Takes the next chunk of the source; returns the bytes of the events it completed, or undefined when none. */
  push(chunk: Uint8Array): Uint8Array | undefined {
    let end = -1
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number
      if (this.#afterCR) {
        this.#afterCR = false
        if (byte === LF) {
          if (this.#pendingEnd) end = this.#completeEvent(i + 1)
          continue
        }
        if (this.#pendingEnd) end = this.#completeEvent(i)
      }
      if (byte === LF || byte === CR) {
        const emptyLine = this.#lineLength === 0
        this.#endLine()
        if (byte === CR) {
          this.#afterCR = true
          this.#pendingEnd = emptyLine
        } else if (emptyLine) end = this.#completeEvent(i + 1)
        continue
      }
      if (this.#dataMatch >= 0 && this.#dataMatch < DATA.length) {
        this.#dataMatch = byte === DATA[this.#dataMatch] ? this.#dataMatch + 1 : -1
      }
      this.#lineLength++
    }
    if (end < 0) {
      if (chunk.length > 0) this.#held.push(chunk)
      return undefined
    }
    const done = this.#take(chunk.subarray(0, end))
    if (end < chunk.length) this.#held.push(chunk.subarray(end))
    return done
  }

  /** The source ended cleanly: returns what is held, as the server sent it (the last event may lack its blank line). */
  end(): Uint8Array | undefined {
    if (this.#pendingEnd) this.#completeEvent(0)
    const rest = this.#held.length > 0 ? this.#take(new Uint8Array(0)) : undefined
    this.#reset()
    return rest
  }

  /** The source was cut: drops the partial event, so the next source starts at an event boundary. */
  cut(): void {
    this.#held = []
    this.#reset()
  }

  #reset(): void {
    this.#eventHasData = false
    this.#lineLength = 0
    this.#dataMatch = 0
    this.#afterCR = false
    this.#pendingEnd = false
  }

  #endLine(): void {
    const isData = this.#dataMatch === DATA.length || (this.#dataMatch === DATA.length - 1 && this.#lineLength === DATA.length - 1)
    if (isData) this.#eventHasData = true
    this.#lineLength = 0
    this.#dataMatch = 0
  }

  /** Counts the event that just ended; returns `end`, the index in the chunk right after it. */
  #completeEvent(end: number): number {
    if (this.#eventHasData) this.#count++
    this.#eventHasData = false
    this.#pendingEnd = false
    return end
  }

  /** The held bytes followed by `tail`, as one array; empties what is held. */
  #take(tail: Uint8Array): Uint8Array {
    if (this.#held.length === 0) return tail
    let length = tail.length
    for (const part of this.#held) length += part.length
    const out = new Uint8Array(length)
    let at = 0
    for (const part of this.#held) {
      out.set(part, at)
      at += part.length
    }
    out.set(tail, at)
    this.#held = []
    return out
  }
}
