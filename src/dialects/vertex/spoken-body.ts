// A Vertex AI rawPredict body turned into the Messages body it stands for, by splicing its top-level members: the
// body was checked as JSON on the way in, and a large one (Claude Code's sessions pass 1 MiB) only scanned, so it is
// never parsed whole here. One pass over the bytes, strings skipped with `indexOf`: bounded by the body's size.
import type { RequestBytes } from '../dialect.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09

function skipSpace(bytes: Buffer, at: number): number {
  while (isSpace(bytes[at])) at++
  return at
}

/** The index just after the string that opens at `at` (its quote). */
function afterString(bytes: Buffer, at: number): number {
  let quote = at
  for (;;) {
    quote = bytes.indexOf(QUOTE, quote + 1)
    if (quote === -1) return bytes.length
    let backslashes = 0
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote + 1
  }
}

/** The index just after the value that starts at `at`. */
function afterValue(bytes: Buffer, at: number): number {
  const first = bytes[at]
  if (first === QUOTE) return afterString(bytes, at)
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    while (at < bytes.length && bytes[at] !== COMMA && bytes[at] !== CLOSE_BRACE && bytes[at] !== CLOSE_BRACKET && !isSpace(bytes[at])) at++
    return at
  }
  let depth = 0
  for (let i = at; i < bytes.length; i++) {
    const byte = bytes[i]
    if (byte === QUOTE) i = afterString(bytes, i) - 1
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--
      if (depth === 0) return i + 1
    }
  }
  return bytes.length
}

/** One top-level member: its key as written and where the member and its value lie. */
interface Member {
  key: string
  start: number
  valueStart: number
  end: number
}

/** The top-level members of a JSON object's bytes, in order. */
function members(bytes: Buffer): Member[] {
  const found: Member[] = []
  let at = skipSpace(bytes, 0)
  if (bytes[at] !== OPEN_BRACE) return found
  at = skipSpace(bytes, at + 1)
  while (at < bytes.length && bytes[at] === QUOTE) {
    const start = at
    const keyEnd = afterString(bytes, at)
    // Keys are compared as written: the names removed here are plain ASCII, which no client escapes.
    const key = bytes.toString('utf8', start + 1, keyEnd - 1)
    at = skipSpace(bytes, keyEnd)
    if (bytes[at] !== COLON) break
    const valueStart = skipSpace(bytes, at + 1)
    const end = afterValue(bytes, valueStart)
    found.push({ key, start, valueStart, end })
    at = skipSpace(bytes, end)
    if (bytes[at] !== COMMA) break
    at = skipSpace(bytes, at + 1)
  }
  return found
}

/**
 * `body` without its top-level members named in `removed` or `added`, with `added` written first (`model` and `stream` from
 * the path). The result's `model` span is where the added `model` string lies, for a later rename by splice.
 */
export function splicedBody(
  body: RequestBytes,
  removed: readonly string[],
  added: Readonly<Record<string, string | boolean>>,
): RequestBytes {
  const { bytes } = body
  const head = Object.entries(added).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
  const pieces: Buffer[] = [Buffer.from(`{${head.join(',')}`)]
  const spans = new Map<string, readonly [number, number]>()
  if (typeof added.model === 'string') {
    const from = Buffer.byteLength(`{${JSON.stringify('model')}:`)
    spans.set('model', [from, from + Buffer.byteLength(JSON.stringify(added.model))])
  }
  let comma = head.length > 0
  for (const member of members(bytes)) {
    if (removed.includes(member.key) || Object.hasOwn(added, member.key)) continue
    if (comma) pieces.push(Buffer.from(','))
    pieces.push(bytes.subarray(member.start, member.end))
    comma = true
  }
  pieces.push(Buffer.from('}'))
  const without = (fields: Record<string, unknown>) => {
    const kept: Record<string, unknown> = { ...added }
    for (const [key, value] of Object.entries(fields)) if (!removed.includes(key) && !Object.hasOwn(added, key)) kept[key] = value
    return kept
  }
  return {
    bytes: Buffer.concat(pieces),
    fields: without(body.fields),
    value: body.value === undefined ? undefined : without(body.value),
    spans,
  }
}
