/** What stands where an upstream echoed one of the gateway's own keys. */
const REDACTED = Buffer.from('[redacted]')

/**
 * Removes the gateway's upstream keys from bytes an upstream sent, before a client or a record sees them (an
 * upstream that echoes the key it was given in an error message would otherwise hand it to every client).
 * Whole bodies are rewritten at once; a stream is rewritten chunk by chunk, holding back only a chunk's tail that
 * could be the start of a key split across two chunks.
 */
export class KeyRedaction {
  private readonly keys: Buffer[]
  private readonly texts: string[]

  constructor(keys: readonly string[]) {
    // Longest first, so a key that contains another is replaced whole.
    this.keys = [...new Set(keys)]
      .filter((key) => key.length > 0)
      .map((key) => Buffer.from(key))
      .sort((a, b) => b.length - a.length)
    this.texts = this.keys.map((key) => key.toString())
  }

  /** Whether there is anything to redact at all; without keys every method returns its input. */
  get active(): boolean {
    return this.keys.length > 0
  }

  /** A whole body with every key replaced; the same buffer when it holds none. */
  whole(body: Buffer): Buffer {
    let out = body
    for (const key of this.keys) out = replaceAll(out, key)
    return out
  }

  /** A header value with every key replaced. */
  text(value: string): string {
    let out = value
    for (const key of this.texts) if (out.includes(key)) out = out.split(key).join(REDACTED.toString())
    return out
  }

  /** A fresh redaction for one stream. */
  stream(): StreamRedaction {
    return new StreamRedaction(this)
  }

  /** Length of the longest tail of `data` that is a proper prefix of some key. */
  partialKeyAtEnd(data: Buffer): number {
    let longest = 0
    for (const key of this.keys) {
      const first = key[0] as number
      const from = Math.max(0, data.length - key.length + 1)
      for (let at = data.indexOf(first, from); at !== -1 && at < data.length; at = data.indexOf(first, at + 1)) {
        const tail = data.length - at
        if (tail > longest && data.subarray(at).equals(key.subarray(0, tail))) {
          longest = tail
          break
        }
      }
    }
    return longest
  }
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

function replaceAll(body: Buffer, key: Buffer): Buffer {
  let at = body.indexOf(key)
  if (at === -1) return body
  const parts: Buffer[] = []
  let start = 0
  while (at !== -1) {
    parts.push(body.subarray(start, at), REDACTED)
    start = at + key.length
    at = body.indexOf(key, start)
  }
  parts.push(body.subarray(start))
  return Buffer.concat(parts)
}
