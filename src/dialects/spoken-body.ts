// A body of a cloud transport turned into the body of the dialect it speaks, by splicing its top-level members:
// Vertex AI's rawPredict and Bedrock's InvokeModel bodies are Messages bodies with members of their own in and the
// path's `model` (and `stream`) out. The body was checked as JSON on the way in, and a large one (Claude Code's
// sessions pass 1 MiB) only scanned, so it is never parsed whole here. One pass over the bytes, strings skipped with
// `indexOf`: bounded by the body's size. It runs on every such call, so it allocates little: no string per key
// unless the key is escaped, the kept members copied in runs into one buffer.
import type { RequestBytes } from './dialect.js'

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

/**
 * Whether the key string spanning [start, end) (its quotes included) is one of `names` (plain ASCII), compared as
 * JSON reads it: an escaped key (`"model"` written with `\u0064`) is decoded first, as rare as it is.
 */
function keyIn(bytes: Buffer, start: number, end: number, names: readonly string[]): boolean {
  // A key is short: looked at byte by byte, where `indexOf` would search the rest of the body.
  for (let i = start + 1; i < end - 1; i++) {
    if (bytes[i] === BACKSLASH) return names.includes(JSON.parse(bytes.toString('utf8', start, end)) as string)
  }
  const length = end - start - 2
  for (const name of names) {
    if (name.length !== length) continue
    let i = 0
    while (i < length && bytes[start + 1 + i] === name.charCodeAt(i)) i++
    if (i === length) return true
  }
  return false
}

/**
 * Calls `visit` with each top-level member of a JSON object's bytes, in order: where its key string starts and ends
 * (quotes included) and where its value starts and ends.
 */
function forEachMember(bytes: Buffer, visit: (keyStart: number, keyEnd: number, valueStart: number, end: number) => void): void {
  let at = skipSpace(bytes, 0)
  if (bytes[at] !== OPEN_BRACE) return
  at = skipSpace(bytes, at + 1)
  while (at < bytes.length && bytes[at] === QUOTE) {
    const keyStart = at
    const keyEnd = afterString(bytes, at)
    at = skipSpace(bytes, keyEnd)
    if (bytes[at] !== COLON) return
    const valueStart = skipSpace(bytes, at + 1)
    const end = afterValue(bytes, valueStart)
    visit(keyStart, keyEnd, valueStart, end)
    at = skipSpace(bytes, end)
    if (bytes[at] !== COMMA) return
    at = skipSpace(bytes, at + 1)
  }
}

/**
 * The value of the top-level member `name` (plain ASCII) of a JSON object's bytes, parsed from its own bytes alone;
 * undefined when absent. A repeated member's last value, as `JSON.parse` reads it.
 */
export function memberValue(bytes: Buffer, name: string): unknown {
  let found: [number, number] | undefined
  const names = [name]
  forEachMember(bytes, (keyStart, keyEnd, valueStart, end) => {
    if (keyIn(bytes, keyStart, keyEnd, names)) found = [valueStart, end]
  })
  return found === undefined ? undefined : JSON.parse(bytes.toString('utf8', found[0], found[1]))
}

/** `source`'s own members but those named in `removed` or `added`, after `added`'s: a parsed object, or its skeleton. */
function keptFields(
  source: Record<string, unknown>,
  removed: readonly string[],
  added: Readonly<Record<string, string | boolean>>,
): Record<string, unknown> {
  // Built up from empty: an object spread from `added` and then grown is many times slower to build (V8).
  const kept: Record<string, unknown> = {}
  for (const key in added) kept[key] = added[key]
  for (const key in source) {
    if (!Object.hasOwn(source, key) || removed.includes(key) || Object.hasOwn(added, key)) continue
    // JSON.parse makes `__proto__` an own member; an assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(kept, key, { value: source[key], enumerable: true, writable: true, configurable: true })
    else kept[key] = source[key]
  }
  return kept
}

/**
 * `body` without its top-level members named in `removed` or `added` (plain ASCII names), with `added` written
 * first (`model` and `stream` from the path); every other member's bytes as sent. The result's `model` span is where
 * the added `model` string lies, for a later rename by splice.
 */
export function splicedBody(
  body: RequestBytes,
  removed: readonly string[],
  added: Readonly<Record<string, string | boolean>>,
): RequestBytes {
  const { bytes } = body
  const addedKeys = Object.keys(added)
  let head = '{'
  let modelSpan: readonly [number, number] | undefined
  for (const key of addedKeys) {
    if (head.length > 1) head += ','
    head += `${JSON.stringify(key)}:`
    const value = JSON.stringify(added[key])
    if (key === 'model' && typeof added[key] === 'string') {
      const from = Buffer.byteLength(head)
      modelSpan = [from, from + Buffer.byteLength(value)]
    }
    head += value
  }
  // Runs of consecutive kept members, each copied whole with the bytes between its members as sent.
  const runs: number[] = []
  let runStart = -1
  let runEnd = -1
  forEachMember(bytes, (keyStart, keyEnd, _valueStart, end) => {
    if (keyIn(bytes, keyStart, keyEnd, removed) || keyIn(bytes, keyStart, keyEnd, addedKeys)) {
      if (runStart !== -1) runs.push(runStart, runEnd)
      runStart = -1
      return
    }
    if (runStart === -1) runStart = keyStart
    runEnd = end
  })
  if (runStart !== -1) runs.push(runStart, runEnd)
  const headBytes = Buffer.byteLength(head)
  // Runs after the first piece are each preceded by a comma.
  const commas = runs.length / 2 - (headBytes > 1 || runs.length === 0 ? 0 : 1)
  let size = headBytes + commas + 1
  for (let i = 0; i < runs.length; i += 2) size += (runs[i + 1] as number) - (runs[i] as number)
  const out = Buffer.allocUnsafe(size)
  let at = out.write(head, 0, headBytes, 'utf8')
  for (let i = 0; i < runs.length; i += 2) {
    if (at > 1) out[at++] = COMMA
    at += bytes.copy(out, at, runs[i] as number, runs[i + 1] as number)
  }
  out[at] = CLOSE_BRACE
  const spans = new Map<string, readonly [number, number]>()
  if (modelSpan !== undefined) spans.set('model', modelSpan)
  const fields = keptFields(body.fields, removed, added)
  // A body parsed whole is its own fields: one copy serves as both.
  const value = body.value === undefined ? undefined : body.value === body.fields ? fields : keptFields(body.value, removed, added)
  return { bytes: out, fields, value, spans }
}
