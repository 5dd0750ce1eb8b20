// What both wire formats derive the same way from a request: reply text, token counts, stream pieces.

/** A parsed JSON object: a request body, its `mock` controls, or an object inside them. */
export type JsonObject = Record<string, unknown>

/** The plain JSON content type: OpenAI answers, and Gemini replies sent whole. */
export const JSON_TYPE = 'application/json'

const FILLER = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '
// Bounds the frames built in memory for one stream, whatever a request asks for.
const MAX_CHUNKS = 100_000

/** Non-negative finite number or undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined
}

/** Deterministic token estimate: one token per 4 UTF-16 code units. */
export function tokens(len: number): number {
  return Math.ceil(len / 4)
}

function fillerText(n: number): string {
  return n <= FILLER.length ? FILLER.slice(0, n) : FILLER.repeat(Math.ceil(n / FILLER.length)).slice(0, n)
}

/** The reply text a control sets: mock.content_bytes > mock.content, else undefined. */
export function controlledText(ctl: JsonObject): string | undefined {
  const bytes = num(ctl.content_bytes)
  if (bytes !== undefined) return fillerText(Math.floor(bytes))
  if (typeof ctl.content === 'string') return ctl.content
  return undefined
}

/** Split `text` into exactly `n` pieces (never inside a surrogate pair). */
export function splitText(text: string, n: number): string[] {
  if (n <= 0) return []
  if (n === 1) return [text]
  const out: string[] = []
  const len = text.length
  let start = 0
  for (let i = 1; i <= n; i++) {
    let end = i === n ? len : Math.floor((len * i) / n)
    if (end < start) end = start
    if (end > 0 && end < len) {
      const c = text.charCodeAt(end - 1)
      if (c >= 0xd800 && c <= 0xdbff) end++
    }
    out.push(text.slice(start, end))
    start = end
  }
  return out
}

/** Number of content pieces a stream is cut into (`mock.chunks`, default 5). */
export function chunkCount(ctl: JsonObject): number {
  const c = num(ctl.chunks)
  return c === undefined ? 5 : Math.min(MAX_CHUNKS, Math.floor(c))
}

/** The length of an embedding unless the request asks for another. */
export const DEFAULT_DIMENSIONS = 8

/**
 * A deterministic embedding of `text`: `dims` multiples of 1/256 in [-0.5, 0.5), exact in a float32, so a vector
 * decoded from base64 equals the float one.
 */
export function embeddingOf(text: string, dims: number): number[] {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  const out: number[] = []
  for (let i = 0; i < dims; i++) out.push((((h + Math.imul(i + 1, 0x9e3779b1)) >>> 0) % 256) / 256 - 0.5)
  return out
}
