// Values read after a member's key in JSON text that is not parsed whole: the tail of a large answer, or one stream
// event tested before it is worth parsing. A key can be told from text: inside a JSON string every quote is escaped,
// so `"key"` followed by a colon is always a member name.

import { closingQuote } from './quote.js'

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

const QUOTE = 0x22

/** Each key searched for, quoted, as bytes: the buffer's search takes a buffer without encoding a string per call. */
const QUOTED_KEYS = new Map<string, Buffer>()

function quotedKey(key: string): Buffer {
  let quoted = QUOTED_KEYS.get(key)
  if (quoted === undefined) {
    quoted = Buffer.from(`"${key}"`)
    // Keys are the dialects' usage fields: a handful. The bound only guards against a caller with many.
    if (QUOTED_KEYS.size < 64) QUOTED_KEYS.set(key, quoted)
  }
  return quoted
}

/** The JSON object that is the value of the last `"key":` in `bytes`, or undefined when there is none whole. */
export function objectAfterKey(bytes: Buffer, key: string): unknown {
  const at = bytes.lastIndexOf(quotedKey(key))
  if (at === -1) return undefined
  return objectAt(bytes, at + key.length + 2)
}

/** Whether the quote at `at` is not escaped: no backslash before it, or an even run of them. */
function unescaped(bytes: Buffer, at: number): boolean {
  let backslashes = 0
  while (at - 1 - backslashes >= 0 && bytes[at - 1 - backslashes] === 0x5c) backslashes++
  return backslashes % 2 === 0
}

/** The unescaped quote that opens the string closed at `close`, searched no lower than `floor`; -1 if none. */
function openingQuote(bytes: Buffer, close: number, floor: number): number {
  let open = bytes.lastIndexOf(QUOTE, close - 1)
  while (open >= floor && !unescaped(bytes, open)) open = bytes.lastIndexOf(QUOTE, open - 1)
  return open >= floor ? open : -1
}

/**
 * The JSON object that is the value of the member `key` of the outermost object of the JSON text `bytes`, read
 * without parsing the rest: its last `"key"` is found within the last `withinBytes`, and only taken when a scan back
 * from the end puts it directly in the outermost object (JSON can be read backwards: outside a string there is no
 * quote, and inside one every quote is escaped). Undefined when that cannot be told so: no such member near the end,
 * one inside another value, or a value that is not an object; the caller then parses the whole. Strings are skipped
 * by the buffer's own search for the next quote, not byte by byte: on a small answer a byte loop cost as much as
 * parsing the whole.
 */
export function topLevelObjectMember(bytes: Buffer, key: string, withinBytes: number): { value: unknown } | undefined {
  const at = bytes.lastIndexOf(quotedKey(key))
  if (at === -1 || bytes.length - at > withinBytes) return undefined
  let depth = 0
  let i = bytes.length - 1
  while (i >= at) {
    const c = bytes[i]
    if (c === QUOTE) {
      const open = openingQuote(bytes, i, at)
      // No opening quote at or after the key's: the key is inside a string.
      if (open === -1) return undefined
      i = open - 1
      continue
    }
    if (c === 0x7d || c === 0x5d) depth++
    else if (c === 0x7b || c === 0x5b) depth--
    i--
  }
  if (depth !== 1) return undefined
  try {
    const value = objectAt(bytes, at + key.length + 2)
    return value === undefined ? undefined : { value }
  } catch {
    return undefined
  }
}

/** The JSON object after the member name that ends before `from` (its colon and blanks skipped), or undefined. */
function objectAt(bytes: Buffer, from: number): unknown {
  let i = from
  while (i < bytes.length && (isBlank(bytes[i]) || bytes[i] === 0x3a)) i++
  if (bytes[i] !== 0x7b) return undefined
  const start = i
  let depth = 0
  for (; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === QUOTE) {
      i = closingQuote(bytes, i)
      if (i === -1) return undefined
    } else if (c === 0x7b) {
      depth++
    } else if (c === 0x7d && --depth === 0) {
      return JSON.parse(bytes.toString('utf8', start, i + 1))
    }
  }
  return undefined
}

/**
 * The string values of every `"key":` member in `text`, in order, at most `limit` of them and none longer than
 * `maxLength`; `null` and other values are skipped, as are strings with escapes (no finish reason has one).
 */
export function stringsAfterKey(text: string, key: string, limit: number, maxLength: number): string[] {
  const quoted = `"${key}"`
  const found: string[] = []
  for (let at = text.indexOf(quoted); at !== -1 && found.length < limit; at = text.indexOf(quoted, at + quoted.length)) {
    let i = at + quoted.length
    while (isBlank(text.charCodeAt(i))) i++
    if (text.charCodeAt(i) !== 0x3a) continue
    i++
    while (isBlank(text.charCodeAt(i))) i++
    if (text.charCodeAt(i) !== 0x22) continue
    const end = text.indexOf('"', i + 1)
    if (end === -1 || end - i - 1 > maxLength) continue
    const value = text.slice(i + 1, end)
    if (!value.includes('\\')) found.push(value)
  }
  return found
}
