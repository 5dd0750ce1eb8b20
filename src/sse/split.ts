const LF = 0x0a
const CR = 0x0d

/** How the unfinished event ends, for a blank line that straddles two chunks. */
enum Tail {
  /** Not inside a blank line. */
  Other = 0,
  /** With a line feed: a `\n` or `\r\n` next ends the event. */
  Lf = 1,
  /** With a line feed and a carriage return: a `\n` next ends the event. */
  LfCr = 2,
}

/**
 * Splits an event-stream byte stream, cut anywhere, into whole events, each with the blank line that ends it.
 * Events end at `\n\n` or `\r\n\r\n` (what every upstream and translator sends). Holds only the unfinished event,
 * as the chunks it came in: a large event arriving in many chunks is scanned once and joined once, when it ends,
 * so the work is linear in the bytes (a rescan of the held bytes per chunk made a 20 MiB event cost minutes).
 */
export class EventSplitter {
  #held: Buffer[] = []
  #heldBytes = 0
  #tail = Tail.Other
  #examined = 0

  /** Bytes looked at or copied so far: what tests bound to show the work is linear. */
  get examined(): number {
    return this.#examined
  }

  /** The events this chunk completes, in order (views into the chunk when they lie in it, else joined once). */
  push(chunk: Buffer): Buffer[] {
    const events: Buffer[] = []
    // Where the event being read starts in this chunk, and where its current line does (-1: in the held bytes).
    let start = 0
    let lineStart = -1
    let tail = this.#tail
    for (let at = chunk.indexOf(LF); ; at = chunk.indexOf(LF, at + 1)) {
      this.#examined += (at === -1 ? chunk.length : at + 1) - Math.max(start, lineStart + 1, 0)
      if (at === -1) break
      if (this.#endsEvent(chunk, at, start, lineStart, tail)) {
        events.push(this.#take(chunk, start, at + 1))
        start = at + 1
        lineStart = -1
        tail = Tail.Other
      } else lineStart = at
    }
    this.#hold(chunk, start, lineStart, tail)
    return events
  }

  /** What the stream ended inside of (an event without its blank line), if anything; the splitter is empty after. */
  rest(): Buffer | undefined {
    const rest = this.#heldBytes === 0 ? undefined : this.#join(this.#held)
    this.#held = []
    this.#heldBytes = 0
    this.#tail = Tail.Other
    return rest
  }

  /** Whether the line feed at `at` ends a blank line of the event that starts at `start` (a line feed before it too). */
  #endsEvent(chunk: Buffer, at: number, start: number, lineStart: number, tail: Tail): boolean {
    if (lineStart >= 0) return at === lineStart + 1 || (at === lineStart + 2 && chunk[at - 1] === CR)
    // No line feed of this event yet in the chunk: a blank line can only have begun in the held bytes.
    if (start > 0 || this.#heldBytes === 0) return false
    return (at === 0 && tail !== Tail.Other) || (at === 1 && tail === Tail.Lf && chunk[0] === CR)
  }

  /** The event that ends at `end` of the chunk: the held bytes and the chunk's part joined, once. */
  #take(chunk: Buffer, start: number, end: number): Buffer {
    const part = chunk.subarray(start, end)
    if (start > 0 || this.#heldBytes === 0) return part
    const event = this.#join([...this.#held, part])
    this.#held = []
    this.#heldBytes = 0
    return event
  }

  /** Keeps what follows the chunk's last event, and how it ends, for the next chunk. */
  #hold(chunk: Buffer, start: number, lineStart: number, tail: Tail): void {
    if (start === chunk.length) {
      if (start > 0) this.#tail = Tail.Other
      return
    }
    const part = chunk.subarray(start)
    if (lineStart >= 0) {
      const after = chunk.length - lineStart - 1
      this.#tail = after === 0 ? Tail.Lf : after === 1 && chunk[lineStart + 1] === CR ? Tail.LfCr : Tail.Other
    } else this.#tail = start === 0 && tail === Tail.Lf && part.length === 1 && part[0] === CR ? Tail.LfCr : Tail.Other
    this.#held.push(part)
    this.#heldBytes += part.length
  }

  #join(parts: Buffer[]): Buffer {
    if (parts.length === 1) return parts[0] as Buffer
    const joined = Buffer.concat(parts)
    this.#examined += joined.length
    return joined
  }
}
