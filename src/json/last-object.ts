// Reading one member out of the end of a JSON text without parsing the rest.

/**
 * The JSON object that is the value of the last `"key":` in `bytes`, or undefined when there is none whole: how a
 * usage object is read from the tail of a body too large to parse.
 */
export function objectAfterKey(bytes: Buffer, key: string): unknown {
  const at = bytes.lastIndexOf(`"${key}"`)
  if (at === -1) return undefined
  let i = at + key.length + 2
  while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09 || bytes[i] === 0x3a) i++
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
