/** The byte that opens every JSON escape. */
const BACKSLASH = 0x5c
const SLASH = 0x2f
const U = 0x75

/**
 * How deep an escape may be nested: a key in a JSON string inside a JSON string is escaped twice (`\\u0073`), and a
 * third level doubles that again. The bound keeps the longest spelling, and so a stream's held-back tail, finite.
 */
const MAX_RUN = 4

/** The most bytes one character of a key can take: a run of backslashes, `u` and four hex digits. */
const MAX_CHAR_SPAN = MAX_RUN + 5

/** A match of a key: from its first byte to just past its last. */
export type Span = [start: number, end: number]

/**
 * One key and every way an upstream can spell it in JSON: each character literally or as its `\uXXXX` escape (hex
 * digits in either case), `/` also as `\/`, an escape's backslash doubled when the key sits in a string nested in a
 * string. Encoders escape such characters at will, and a client, or the gateway's own translator, decodes them back
 * into the key; so redaction must see through every spelling, not only the literal bytes. Keys are ASCII.
 */
export class KeySpelling {
  /** The key's literal bytes. */
  readonly literal: Buffer
  /** Where each character occurs in the key, to place an escape found in a body within a candidate match. */
  private readonly at = new Map<number, number[]>()
  /** Each character's four hex digits, lower case, for escapes cut off at a stream chunk's end. */
  private readonly hex: string[]

  constructor(key: string) {
    this.literal = Buffer.from(key)
    this.literal.forEach((code, index) => {
      const list = this.at.get(code)
      if (list) list.push(index)
      else this.at.set(code, [index])
    })
    this.hex = [...this.literal].map((code) => code.toString(16).padStart(4, '0'))
  }

  /** The most bytes a spelling of the key can take. */
  get maxSpan(): number {
    return this.literal.length * MAX_CHAR_SPAN
  }

  /**
   * Every spelling of the key in `data`, leftmost first and not overlapping. `escaped` false (the body holds no
   * backslash) leaves only the literal search, which is all a body without escapes can hold.
   */
  find(data: Buffer, escaped: boolean): Span[] {
    const found: Span[] = []
    const length = this.literal.length
    for (let at = data.indexOf(this.literal); at !== -1; at = data.indexOf(this.literal, at + 1)) found.push([at, at + length])
    if (!escaped) return found
    // A spelling that is not literal has a first escape, with only literal characters before it: each escape that
    // decodes to one of the key's characters is tried at each place that character holds in the key.
    for (let run = data.indexOf(BACKSLASH); run !== -1; ) {
      let next = run
      while (data[next] === BACKSLASH) next++
      // Backslashes beyond the deepest nesting are escaped backslashes before the escape: it takes the last ones,
      // leaving an even count, which decodes to whole backslashes.
      const from = next - run <= MAX_RUN ? run : next - MAX_RUN + ((next - run - MAX_RUN) % 2)
      const decoded = escapeAt(data, from)
      if (decoded !== -1) {
        const end = Math.floor(decoded / 256)
        for (const index of this.at.get(decoded % 256) ?? []) {
          const start = from - index
          if (start < 0 || data.compare(this.literal, 0, index, start, from) !== 0) continue
          const last = this.matchFrom(data, end, index + 1)
          if (last !== -1) found.push([start, last])
        }
      }
      run = data.indexOf(BACKSLASH, next)
    }
    return leftmost(found)
  }

  /** Whether `data` from `start` to its end could, with more bytes, become a spelling of the key. */
  beginsAt(data: Buffer, start: number): boolean {
    let at = start
    let index = 0
    while (at < data.length) {
      if (index === this.literal.length) return false
      const code = this.literal[index] as number
      if (data[at] === code) at++
      else if (data[at] !== BACKSLASH) return false
      else {
        const decoded = escapeAt(data, at)
        if (decoded === -1) return this.escapeBegins(data, at, index)
        if (decoded % 256 !== code) return false
        at = Math.floor(decoded / 256)
      }
      index++
    }
    return index < this.literal.length
  }

  /** The end of a spelling of the key's characters from `index` on, starting at byte `at`; -1 when there is none. */
  private matchFrom(data: Buffer, from: number, index: number): number {
    let at = from
    for (let i = index; i < this.literal.length; i++) {
      const code = this.literal[i] as number
      if (data[at] === code) at++
      else if (data[at] !== BACKSLASH) return -1
      else {
        const decoded = escapeAt(data, at)
        if (decoded === -1 || decoded % 256 !== code) return -1
        at = Math.floor(decoded / 256)
      }
    }
    return at
  }

  /** Whether the bytes from `at` to the end are the cut-off start of an escape of the key's character `index`. */
  private escapeBegins(data: Buffer, from: number, index: number): boolean {
    let at = from
    while (at < data.length && data[at] === BACKSLASH) at++
    if (at - from > MAX_RUN) return false
    if (at === data.length) return true
    if (data[at] !== U) return false
    const digits = this.hex[index] as string
    for (let i = 0; at + 1 + i < data.length; i++) {
      if (i === 4 || lower(data[at + 1 + i] as number) !== digits.charCodeAt(i)) return false
    }
    return true
  }
}

/**
 * The escape whose run of backslashes starts at `from`, as its end times 256 plus the character it stands for; -1 when
 * the bytes there are no escape of an ASCII character (the only kind a key holds).
 */
function escapeAt(data: Buffer, from: number): number {
  let at = from
  while (data[at] === BACKSLASH) at++
  if (at - from > MAX_RUN) return -1
  if (data[at] === SLASH) return (at + 1) * 256 + SLASH
  if (data[at] !== U || at + 5 > data.length) return -1
  let code = 0
  for (let i = 1; i <= 4; i++) {
    const digit = hexValue(data[at + i] as number)
    if (digit === -1) return -1
    code = code * 16 + digit
  }
  return code < 0x80 ? (at + 5) * 256 + code : -1
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  const low = lower(byte)
  return low >= 0x61 && low <= 0x66 ? low - 0x61 + 10 : -1
}

function lower(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte
}

/** The matches a left-to-right replacement takes: leftmost first, the longest where two start together. */
function leftmost(found: Span[]): Span[] {
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const out: Span[] = []
  let end = 0
  for (const span of found) {
    if (span[0] < end) continue
    out.push(span)
    end = span[1]
  }
  return out
}
