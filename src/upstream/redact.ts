import { KeySpelling, type Span } from './key-spelling.js'

/** What stands where an upstream echoed one of the gateway's own keys. */
const REDACTED = Buffer.from('[redacted]')

/** The byte every JSON escape opens with: a body without one can only hold a key literally. */
const BACKSLASH = 0x5c

/**
 * Removes the gateway's upstream keys from bytes an upstream sent, before a client or a record sees them (an
 * upstream that echoes the key it was given in an error message would otherwise hand it to every client), in every
 * spelling JSON allows (see `KeySpelling`): a client or the gateway's translator decodes an escaped key back.
 * Whole bodies are rewritten at once; a stream is rewritten chunk by chunk, holding back only a chunk's tail that
 * could be the start of a key split across two chunks.
 */
export class KeyRedaction {
  private readonly keys: KeySpelling[]
  private readonly widest: number

  constructor(keys: readonly string[]) {
    // Longest first, so a key that contains another is replaced whole.
    this.keys = [...new Set(keys)]
      .filter((key) => key.length > 0)
      .sort((a, b) => b.length - a.length)
      .map((key) => new KeySpelling(key))
    this.widest = Math.max(0, ...this.keys.map((key) => key.maxSpan))
  }

  /** Whether there is anything to redact at all; without keys every method returns its input. */
  get active(): boolean {
    return this.keys.length > 0
  }

  /** A whole body with every key replaced; the same buffer when it holds none. */
  whole(body: Buffer): Buffer {
    // One native search decides, for the whole body, whether escapes are worth looking at.
    const escaped = body.indexOf(BACKSLASH) !== -1
    let out = body
    for (const key of this.keys) out = replaceAll(out, key.find(out, escaped))
    return out
  }

  /** A header value with every key replaced. */
  text(value: string): string {
    const bytes = Buffer.from(value)
    const out = this.whole(bytes)
    return out === bytes ? value : out.toString()
  }

  /** A fresh redaction for one stream. */
  stream(): StreamRedaction {
    return new StreamRedaction(this)
  }

  /** Length of the longest tail of `data` that could, with the bytes that follow, become some key. */
  partialKeyAtEnd(data: Buffer): number {
    // Without a backslash in reach only a literal prefix can be cut off, and only the key's length back.
    const escaped = data.indexOf(BACKSLASH, Math.max(0, data.length - this.widest + 1)) !== -1
    let longest = 0
    for (const key of this.keys) {
      const first = key.literal[0] as number
      const from = Math.max(0, data.length - (escaped ? key.maxSpan : key.literal.length) + 1)
      for (let at = nextStart(data, first, from, escaped); at !== -1; at = nextStart(data, first, at + 1, escaped)) {
        if (data.length - at <= longest) break
        if (key.beginsAt(data, at)) {
          longest = data.length - at
          break
        }
      }
    }
    return longest
  }
}

/** The next place from `from` on where a spelling of a key starting with `first` could begin. */
function nextStart(data: Buffer, first: number, from: number, escaped: boolean): number {
  const literal = data.indexOf(first, from)
  if (!escaped) return literal
  const backslash = data.indexOf(BACKSLASH, from)
  if (literal === -1 || backslash === -1) return Math.max(literal, backslash)
  return Math.min(literal, backslash)
}

/** One stream's redaction: what may go out now, and the few bytes held back that could begin a key. */
export class StreamRedaction {
  private held: Buffer | undefined

  constructor(private readonly redaction: KeyRedaction) {}

  /** The part of a chunk that can go out now; a possible key start at its end waits for the next chunk. */
  chunk(chunk: Buffer): Buffer {
    const data = this.redaction.whole(this.held ? Buffer.concat([this.held, chunk]) : chunk)
    this.held = undefined
    const hold = this.redaction.partialKeyAtEnd(data)
    if (hold === 0) return data
    this.held = Buffer.from(data.subarray(data.length - hold))
    return data.subarray(0, data.length - hold)
  }

  /** What was held back, once the stream ends. */
  flush(): Buffer | undefined {
    const rest = this.held
    this.held = undefined
    return rest
  }
}

function replaceAll(body: Buffer, spans: Span[]): Buffer {
  if (spans.length === 0) return body
  const parts: Buffer[] = []
  let start = 0
  for (const [from, to] of spans) {
    parts.push(body.subarray(start, from), REDACTED)
    start = to
  }
  parts.push(body.subarray(start))
  return Buffer.concat(parts)
}
