import { isUtf8 } from 'node:buffer'

/**
 * The byte offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), or -1 when the bytes are valid. The common case is one native check; the walk runs only on failure.
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1
  let i = 0
  const n = bytes.length
  while (i < n) {
    const b = bytes[i] as number
    if (b < 0x80) {
      i++
      continue
    }
    let need: number
    let min: number
    let max = 0xbf
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1
      min = 0x80
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      min = b === 0xe0 ? 0xa0 : 0x80
      if (b === 0xed) max = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      min = b === 0xf0 ? 0x90 : 0x80
      if (b === 0xf4) max = 0x8f
    } else {
      return i
    }
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k]
      if (c === undefined) return i
      const lo = k === 1 ? min : 0x80
      const hi = k === 1 ? max : 0xbf
      if (c < lo || c > hi) return i
    }
    i += need + 1
  }
  return -1
}
