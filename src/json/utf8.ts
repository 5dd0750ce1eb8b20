import { isUtf8 } from 'node:buffer'

/**
 * The byte offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), or -1 when the bytes are valid. The common case is one native check; the walk runs only on failure.
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  // The walk apart: a function this small is inlined into its caller, one with the walk in it is not, and stays
  // unoptimised for thousands of calls (each runs a few of its bytecodes, which is what makes V8 optimise it).
  return isUtf8(bytes) ? -1 : firstInvalidByte(bytes)
}

/** `invalidUtf8At`'s walk, for bytes known to be invalid. */
function firstInvalidByte(bytes: Uint8Array): number {
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

/** Bodies are checked this much at a time by `invalidUtf8AtInSlices`. */
const WINDOW_BYTES = 1024 * 1024

/**
 * As `invalidUtf8At`, for a large body: checked natively a window at a time with a turn of the event loop between
 * windows, so that 60 MB is not one stall of every other request. A window ends where a character begins (or, in
 * bytes that are invalid anyway, after three continuation bytes), so the windows are all valid UTF-8 exactly when
 * the whole body is, and the first invalid byte is in the first window that fails.
 */
export async function invalidUtf8AtInSlices(bytes: Uint8Array, windowBytes = WINDOW_BYTES): Promise<number> {
  const n = bytes.length
  for (let from = 0; from < n; ) {
    let to = Math.min(n, from + windowBytes)
    // The window takes in the rest of a character it cuts: at most three continuation bytes follow a character's
    // first byte, and a fourth is invalid wherever the window ends.
    for (let ahead = 0; ahead < 3 && to < n && ((bytes[to] as number) & 0xc0) === 0x80; ahead++) to++
    // Natively checked first: the walk runs only in a window that fails.
    const at = invalidUtf8At(bytes.subarray(from, to))
    if (at !== -1) return from + at
    from = to
    if (from < n) await new Promise(setImmediate)
  }
  return -1
}
