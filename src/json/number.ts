/** Significant digits kept when reducing a long number; more than the 768 that correct rounding to a double can need. */
const MAX_DIGITS = 800

/** A scratch buffer for `numberAt`, reusable by one caller. */
export function numberScratch(): Buffer {
  return Buffer.allocUnsafe(MAX_DIGITS + 1)
}

/**
 * The value of a valid JSON number of any length, exactly as JSON.parse reads it, from at most MAX_DIGITS
 * significant digits plus a sticky digit for any non-zero ones dropped, and the decimal exponent.
 */
export function numberAt(b: Uint8Array, start: number, end: number, digits: Buffer = numberScratch()): number {
  let i = start
  const negative = b[i] === 0x2d
  if (negative) i++
  let count = 0
  let sticky = false
  let significant = false
  // value = 0.<digits> × 10^point
  let point = 0
  let c = b[i] as number
  for (; i < end && c >= 0x30 && c <= 0x39; c = b[++i] as number) {
    if (!significant) {
      if (c === 0x30) continue
      significant = true
    }
    point++
    if (count < MAX_DIGITS) digits[count++] = c
    else if (c !== 0x30) sticky = true
  }
  if (i < end && c === 0x2e) {
    for (c = b[++i] as number; i < end && c >= 0x30 && c <= 0x39; c = b[++i] as number) {
      if (!significant) {
        if (c === 0x30) {
          point--
          continue
        }
        significant = true
      }
      if (count < MAX_DIGITS) digits[count++] = c
      else if (c !== 0x30) sticky = true
    }
  }
  let exponent = 0
  let negativeExponent = false
  if (i < end) {
    // 'e' or 'E'
    c = b[++i] as number
    if (c === 0x2d || c === 0x2b) {
      negativeExponent = c === 0x2d
      c = b[++i] as number
    }
    for (; i < end; c = b[++i] as number) {
      // Beyond ±1e10 every exponent gives 0 or Infinity alike.
      if (exponent < 1e10) exponent = exponent * 10 + (c - 0x30)
    }
  }
  if (!significant) return negative ? -0 : 0
  if (sticky) digits[count++] = 0x31
  const text = `${negative ? '-' : ''}0.${digits.toString('latin1', 0, count)}e${point + (negativeExponent ? -exponent : exponent)}`
  return Number(text)
}
