import { GatewayError, invalidField, shown } from '../errors.js'
import { numberAt } from './number.js'
import { closingQuote } from './quote.js'

/** What a body must not hold, beyond being valid JSON: the limits every body path enforces alike. */
export interface JsonRules {
  /** Deepest nesting of objects and arrays allowed (`limits.maxJsonDepth`). */
  maxDepth: number
  /** Top-level members the gateway reads: each may appear once, so the gateway and the upstream read the same one. */
  singleKeys: ReadonlySet<string>
}

/** Numbers with an exponent, or longer than this, are read exactly to see whether they overflow a double. */
export const LONG_NUMBER = 24

/** The 400 for a body nested deeper than the limit. */
export function tooDeep(maxDepth: number, offset: number): GatewayError {
  return new GatewayError(
    'invalid_request',
    `The request body nests objects and arrays deeper than ${maxDepth} levels (limits.maxJsonDepth) at byte ${offset}.`,
  )
}

/** The 400 for a member the gateway reads that appears twice. */
export function duplicateKey(key: string): GatewayError {
  return invalidField(key, `'${shown(key)}' appears more than once in the request body.`)
}

/** The 400 for a number no double can hold (`1e400`), which JSON.parse would silently turn into Infinity. */
export function numberOverflow(offset: number): GatewayError {
  return new GatewayError('invalid_request', `The request body holds a number too large for a double at byte ${offset}.`)
}

/** The JSON string spanning [start, end) of `b`, quotes included: sliced as is unless it holds an escape. */
export function stringAt(b: Buffer, start: number, end: number): string {
  for (let k = start + 1; k < end - 1; k++) if (b[k] === 0x5c) return JSON.parse(b.toString('utf8', start, end)) as string
  return b.toString('utf8', start + 1, end - 1)
}

/**
 * Checks a body that JSON.parse already accepted against the rules it cannot see: nesting depth, repeated
 * top-level members and numbers that overflow. One pass; string contents are skipped natively (memchr), so the
 * cost is in the structure, not the text.
 */
export function inspectJson(b: Buffer, rules: JsonRules): void {
  const n = b.length
  let depth = 0
  let memberKey = false
  // Which single keys were seen, one bit each for the first 31 (a set's allocation and hashing cost more than the rest
  // of a small body's checks), in a set past them.
  let seen = 0
  let seenMore: Set<number> | undefined
  let i = 0
  while (i < n) {
    const c = b[i] as number
    if (c === 0x22) {
      const close = closingQuote(b, i)
      if (memberKey && rules.singleKeys.size > 0) {
        const index = singleKeyAt(b, i, close + 1, rules.singleKeys)
        if (index >= 0 && index < 31) {
          if ((seen & (1 << index)) !== 0) throw duplicateKey(lastNames[index] as string)
          seen |= 1 << index
        } else if (index >= 31) {
          seenMore ??= new Set()
          if (seenMore.has(index)) throw duplicateKey(lastNames[index] as string)
          seenMore.add(index)
        }
      }
      memberKey = false
      i = close + 1
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > rules.maxDepth) throw tooDeep(rules.maxDepth, i)
      memberKey = depth === 1 && c === 0x7b
      i++
    } else if (c === 0x7d || c === 0x5d) {
      depth--
      i++
    } else if (c === 0x2c) {
      // Members of the top-level object are separated by commas at depth 1.
      memberKey = depth === 1
      i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i
      let exponent = false
      for (
        let d = c;
        i < n && (d === 0x2b || d === 0x2d || d === 0x2e || (d | 0x20) === 0x65 || (d >= 0x30 && d <= 0x39));
        d = b[++i] as number
      ) {
        if ((d | 0x20) === 0x65) exponent = true
      }
      if ((exponent || i - start > LONG_NUMBER) && !Number.isFinite(numberAt(b, start, i))) throw numberOverflow(start)
    } else {
      i++
    }
  }
}

/**
 * Whether a body holds at most `limit` objects and arrays: what `JSON.parse` and hashing cost on the event loop
 * grows with them, deeply nested ones most (under 1 MiB of depth-990 nesting, 0.25 s and more), while strings cost
 * little. Stops counting at the limit; safe on any bytes (an unterminated string ends the count).
 */
export function containersAtMost(b: Buffer, limit: number): boolean {
  const n = b.length
  let containers = 0
  let i = 0
  while (i < n) {
    const c = b[i] as number
    if (c === 0x22) {
      const close = closingQuote(b, i)
      if (close === -1) return true
      i = close + 1
    } else {
      if ((c === 0x7b || c === 0x5b) && ++containers > limit) return false
      i++
    }
  }
  return true
}

/**
 * A single key as byte values (an array: reading one costs less than reading a buffer), and its place among the set's
 * keys (its bit among those seen).
 */
type KeyBytes = [codes: number[], index: number]

/** The last set of single keys seen, as bytes by length: a member's name is matched without being made a string. */
let lastKeys: ReadonlySet<string> | undefined
let lastByLength: Array<KeyBytes[] | undefined> = []
/** The last set's keys, by index. */
let lastNames: string[] = []

function byLengthOf(keys: ReadonlySet<string>): Array<KeyBytes[] | undefined> {
  // One set per operation, and a request is checked against one: remembering the last is remembering enough.
  if (keys === lastKeys) return lastByLength
  const byLength: Array<KeyBytes[] | undefined> = []
  const names = [...keys]
  names.forEach((key, index) => {
    const codes = [...Buffer.from(key, 'utf8')]
    const same = byLength[codes.length]
    if (same) same.push([codes, index])
    else byLength[codes.length] = [[codes, index]]
  })
  lastKeys = keys
  lastByLength = byLength
  lastNames = names
  return byLength
}

/** The index (in the set's order) of the single key the member name spanning [start, end) of `b` is; -1 if none. */
function singleKeyAt(b: Buffer, start: number, end: number, keys: ReadonlySet<string>): number {
  const candidates = byLengthOf(keys)[end - start - 2]
  if (candidates) {
    for (let c = 0; c < candidates.length; c++) {
      const [codes, index] = candidates[c] as KeyBytes
      let k = 0
      while (k < codes.length && codes[k] === b[start + 1 + k]) k++
      // Byte for byte a single key, which holds no backslash: the name holds no escape.
      if (k === codes.length) return index
    }
  }
  for (let k = start + 1; k < end - 1; k++) {
    // An escaped name is read as JSON reads it.
    if (b[k] === 0x5c) return lastNames.indexOf(stringAt(b, start, end))
  }
  return -1
}
