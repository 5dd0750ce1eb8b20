const LF = 10
const CR = 13
/** `data:` as bytes: a line is a data field when it starts with it, or is exactly `data`. */
const DATA = [100, 97, 116, 97, 58]

/**
 * Cuts a server-sent event stream at event boundaries and counts the events that carry a `data` field, the way the
 * gateway numbers them for a resume (`Last-Event-ID`). Only complete events are passed on: a partial one is held
 * until its blank line arrives and dropped when the source is cut, so the events of a resume follow on exactly.
 * Lines may end in LF, CRLF or CR (also split across chunks); an event ending in a CR is held until the next byte
 * says whether an LF belongs to it. A source that replays the stream from its start has the events passed on already
 * dropped.
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
  /** While ≥ 0: the source replays the stream from its start, and its events are dropped up to its data event number this + 1. */
  #dropUntil = -1
  #sourceData = 0
  /** Where the event under way starts in the chunk being pushed, and the events that chunk completed. */
  #from = 0
  #parts: Uint8Array[] = []

  /** Complete data-bearing events passed on so far. */
  get count(): number {
    return this.#count
  }

  /** Takes the next chunk of the source; returns the bytes of the events it completed, or undefined when none. */
  push(chunk: Uint8Array): Uint8Array | undefined {
    this.#from = 0
    this.#parts = []
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number
      if (this.#afterCR) {
        this.#afterCR = false
        if (byte === LF) {
          if (this.#pendingEnd) this.#completeEvent(chunk, i + 1)
          continue
        }
        if (this.#pendingEnd) this.#completeEvent(chunk, i)
      }
      if (byte === LF || byte === CR) {
        const emptyLine = this.#lineLength === 0
        this.#endLine()
        if (byte === CR) {
          this.#afterCR = true
          this.#pendingEnd = emptyLine
        } else if (emptyLine) this.#completeEvent(chunk, i + 1)
        continue
      }
      if (this.#dataMatch >= 0 && this.#dataMatch < DATA.length) {
        this.#dataMatch = byte === DATA[this.#dataMatch] ? this.#dataMatch + 1 : -1
      }
      this.#lineLength++
    }
    if (this.#from < chunk.length) this.#held.push(this.#from === 0 ? chunk : chunk.subarray(this.#from))
    return joined(this.#parts)
  }

  /** The source ended cleanly: returns what is held, as the server sent it (the last event may lack its blank line). */
  end(): Uint8Array | undefined {
    this.#parts = []
    this.#from = 0
    if (this.#pendingEnd) this.#completeEvent(new Uint8Array(0), 0)
    if (this.#dropUntil < 0) this.#parts.push(...this.#held)
    this.#held = []
    this.#reset()
    return joined(this.#parts)
  }

  /** The source was cut: drops the partial event, so the next source starts at an event boundary. */
  cut(): void {
    this.#held = []
    this.#dropUntil = -1
    this.#reset()
  }

  /**
   * The next source replays the stream from its start (a repeat of the call served from its kept answer): its events
   * are dropped up to the first data event after the ones already passed on.
   */
  replayed(): void {
    this.#dropUntil = this.#count > 0 ? this.#count : -1
    this.#sourceData = 0
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

  /** The event under way ended at `end` (an index in `chunk`): passed on and counted, or dropped from a replay. */
  #completeEvent(chunk: Uint8Array, end: number): void {
    const hasData = this.#eventHasData
    this.#eventHasData = false
    this.#pendingEnd = false
    if (this.#dropping(hasData)) this.#held = []
    else {
      if (hasData) this.#count++
      this.#parts.push(...this.#held)
      if (end > this.#from) this.#parts.push(chunk.subarray(this.#from, end))
      this.#held = []
    }
    this.#from = end
  }

  #dropping(hasData: boolean): boolean {
    if (this.#dropUntil < 0) return false
    if (hasData && ++this.#sourceData > this.#dropUntil) {
      this.#dropUntil = -1
      return false
    }
    return true
  }
}

/** `parts` as one array (without a copy when there is one), or undefined when there are none. */
function joined(parts: Uint8Array[]): Uint8Array | undefined {
  if (parts.length <= 1) return parts[0]
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
