// Values read after a member's key in JSON text that is not parsed whole: the tail of a large answer, or one stream
// event tested before it is worth parsing. A key can be told from text: inside a JSON string every quote is escaped,
// so `"key"` followed by a colon is always a member name.

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** The JSON object that is the value of the last `"key":` in `bytes`, or undefined when there is none whole. */
export function objectAfterKey(bytes: Buffer, key: string): unknown {
  const at = bytes.lastIndexOf(`"${key}"`)
  if (at === -1) return undefined
  let i = at + key.length + 2
  while (isBlank(bytes[i]) || bytes[i] === 0x3a) i++
  if (bytes[i] !== 0x7b) return undefined
  const start = i
  let depth = 0
  for (; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === 0x22) {
      // Skip the string, escapes included.
      for (i++; i < bytes.length && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++
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
