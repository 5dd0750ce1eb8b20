// Where a JSON string ends, found from its opening quote. Most strings of a request or an answer are a few bytes
// long, and a buffer's native search costs more to call (several hundred instructions) than a short scan here;
// long strings are left to it, which skips text at memchr speed.

/** Bytes scanned here before the search is handed to the buffer's native `indexOf`. */
const SCANNED_HERE = 64

/** The index of the unescaped quote that closes the string opening at `open`, or -1 when none does. */
export function closingQuote(b: Uint8Array, open: number): number {
  const n = b.length
  let k = open + 1
  const near = Math.min(n, k + SCANNED_HERE)
  while (k < near) {
    const c = b[k] as number
    if (c === 0x22) return k
    // A backslash escapes the byte after it, whatever it is.
    k += c === 0x5c ? 2 : 1
  }
  if (k >= n) return -1
  let close = (b as Buffer).indexOf(0x22, k)
  // From here on a quote counts when the run of backslashes before it is even.
  while (close !== -1) {
    let j = close - 1
    while (b[j] === 0x5c) j--
    if ((close - 1 - j) % 2 === 0) return close
    close = (b as Buffer).indexOf(0x22, close + 1)
  }
  return -1
}
