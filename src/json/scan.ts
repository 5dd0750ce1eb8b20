// The grammar half of the body scanner: a byte-level state machine that validates a body in slices, without
// recursion, and reports where each value at levels 0..3 of an object body begins and ends to the
// SkeletonBuilder (json-skeleton.ts), which alone decides what to keep. The skeleton's only per-value input is
// those calls, so the hot loop here touches no skeleton state.
import { GatewayError } from '../errors.js'
import { SkeletonBuilder } from './skeleton.js'

/** Re-exported so importers need not know which half of the scanner defines it. */
export { BIG_STRING } from './skeleton.js'

/** Scanner states. The structural ones (whitespace allowed before the next token) come first, up to AFTER. */
const VALUE = 0 // a value must follow (start, after ':' or after ',' in an array)
const VALUE_OR_CLOSE = 1 // after '[': a value or ']'
const KEY_OR_CLOSE = 2 // after '{': a key or '}'
const KEY = 3 // after ',' in an object: a key
const COLON = 4 // after a key
const AFTER = 5 // after a value: ',' or the closing bracket, or (at the top) nothing but whitespace
const STRING = 6 // inside a string
const ESCAPE = 7 // after a backslash
const HEX = 8 // inside \uXXXX
const NUM_MINUS = 9 // after '-'
const NUM_ZERO = 10 // integer part is '0'
const NUM_INT = 11 // inside the integer digits
const NUM_DOT = 12 // after '.'
const NUM_FRAC = 13 // inside the fraction digits
const NUM_E = 14 // after 'e' or 'E'
const NUM_ESIGN = 15 // after the exponent's sign
const NUM_EXP = 16 // inside the exponent digits
const LITERAL = 17 // inside true / false / null

const OBJECT = 1
const ARRAY = 2

/** `true`, `false` and `null` back to back: a literal is matched from its first byte's offset here. */
const LITERALS = Buffer.from('truefalsenull', 'latin1')

function describe(c: number | undefined): string {
  if (c === undefined) return 'end of input'
  if (c > 0x20 && c < 0x7f) return `'${String.fromCharCode(c)}'`
  return `byte 0x${c.toString(16).padStart(2, '0')}`
}

function invalid(reason: string, offset: number): GatewayError {
  return new GatewayError('invalid_request', `The request body is not valid JSON: ${reason} at byte ${offset}.`)
}

/** One body's scan: the grammar state carried from slice to slice. */
class Scanner {
  i = 0
  state = VALUE
  depth = 0
  stack = new Uint8Array(64)
  /** 3 while the top-level value is an object (levels 1..3 are reported), -1 otherwise. */
  trackDepth = 3
  isObject = false
  inKey = false
  hexLeft = 0
  literalAt = 0
  literalEnd = 0
  /** The span of the last key scanned, quotes included: at a value's start, that value's key if it has one. */
  keyStart = 0
  keyEnd = 0
  readonly skeleton: SkeletonBuilder

  constructor(
    readonly bytes: Buffer,
    small: number,
    exactStrings: ReadonlySet<string>,
  ) {
    this.skeleton = new SkeletonBuilder(bytes, small, exactStrings)
  }

  /** Scans bytes up to `end`, from where the last call stopped; stops in the middle of any token. */
  run(end: number): void {
    const b = this.bytes
    let i = this.i
    let state = this.state
    let depth = this.depth
    let stack = this.stack
    let trackDepth = this.trackDepth
    const skeleton = this.skeleton
    let c = 0
    outer: while (i < end) {
      if (state <= AFTER) {
        c = b[i] as number
        if (c <= 0x20) {
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++
            continue
          }
          throw invalid(`unexpected ${describe(c)}`, i)
        }
        switch (state) {
          // biome-ignore lint/suspicious/noFallthroughSwitchClause: the grammar's shared tails fall through on purpose
          case VALUE_OR_CLOSE:
            if (c === 0x5d) {
              depth--
              i++
              if (depth <= trackDepth) skeleton.onEnd(depth, i)
              state = AFTER
              continue
            }
          // falls through
          case VALUE:
            if (depth <= trackDepth) {
              if (depth === 0) {
                this.isObject = c === 0x7b
                trackDepth = this.isObject ? 3 : -1
                this.trackDepth = trackDepth
              } else {
                skeleton.onStart(depth, i, this.keyStart, this.keyEnd)
              }
            }
            if (c === 0x22) {
              state = STRING
            } else if (c === 0x7b || c === 0x5b) {
              if (depth === stack.length) {
                const grown = new Uint8Array(stack.length * 2)
                grown.set(stack)
                stack = grown
                this.stack = grown
              }
              if (c === 0x7b) {
                stack[depth++] = OBJECT
                state = KEY_OR_CLOSE
              } else {
                stack[depth++] = ARRAY
                state = VALUE_OR_CLOSE
              }
            } else if (c >= 0x31 && c <= 0x39) {
              state = NUM_INT
            } else if (c === 0x30) {
              state = NUM_ZERO
            } else if (c === 0x2d) {
              state = NUM_MINUS
            } else if (c === 0x74) {
              this.literalAt = 1
              this.literalEnd = 4
              state = LITERAL
            } else if (c === 0x66) {
              this.literalAt = 5
              this.literalEnd = 9
              state = LITERAL
            } else if (c === 0x6e) {
              this.literalAt = 10
              this.literalEnd = 13
              state = LITERAL
            } else {
              throw invalid(`unexpected ${describe(c)}`, i)
            }
            i++
            continue
          // biome-ignore lint/suspicious/noFallthroughSwitchClause: the grammar's shared tails fall through on purpose
          case KEY_OR_CLOSE:
            if (c === 0x7d) {
              depth--
              i++
              if (depth <= trackDepth) skeleton.onEnd(depth, i)
              state = AFTER
              continue
            }
          // falls through
          case KEY:
            if (c !== 0x22) throw invalid(`expected a string key, found ${describe(c)}`, i)
            this.keyStart = i
            this.inKey = true
            state = STRING
            i++
            continue
          case COLON:
            if (c !== 0x3a) throw invalid(`expected ':', found ${describe(c)}`, i)
            state = VALUE
            i++
            continue
          default: // AFTER
            if (depth === 0) throw invalid('unexpected data after the JSON value', i)
            if (c === 0x2c) {
              state = stack[depth - 1] === OBJECT ? KEY : VALUE
              i++
              continue
            }
            if (c === (stack[depth - 1] === OBJECT ? 0x7d : 0x5d)) {
              depth--
              i++
              if (depth <= trackDepth) skeleton.onEnd(depth, i)
              continue
            }
            throw invalid(`expected ',' or '${stack[depth - 1] === OBJECT ? '}' : ']'}', found ${describe(c)}`, i)
        }
      }
      switch (state) {
        case STRING:
          c = b[i] as number
          while (c !== 0x22 && c !== 0x5c && c >= 0x20) {
            if (++i === end) break outer
            c = b[i] as number
          }
          i++
          if (c === 0x22) {
            if (this.inKey) {
              this.inKey = false
              this.keyEnd = i
              state = COLON
            } else {
              if (depth <= trackDepth) skeleton.onEnd(depth, i)
              state = AFTER
            }
          } else if (c === 0x5c) {
            state = ESCAPE
          } else {
            throw invalid(`unescaped control character ${describe(c)} in a string`, i - 1)
          }
          continue
        case ESCAPE:
          c = b[i] as number
          if (c === 0x75) {
            this.hexLeft = 4
            state = HEX
          } else if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) {
            state = STRING
          } else {
            throw invalid(`bad escape ${describe(c)} in a string`, i)
          }
          i++
          continue
        case HEX:
          c = b[i] as number
          if (!((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)))
            throw invalid(`bad \\u escape: ${describe(c)} is not a hex digit`, i)
          i++
          if (--this.hexLeft === 0) state = STRING
          continue
        case NUM_MINUS:
          c = b[i] as number
          if (c === 0x30) state = NUM_ZERO
          else if (c >= 0x31 && c <= 0x39) state = NUM_INT
          else throw invalid(`expected a digit after '-', found ${describe(c)}`, i)
          i++
          continue
        // biome-ignore lint/suspicious/noFallthroughSwitchClause: the grammar's shared tails fall through on purpose
        case NUM_INT:
          c = b[i] as number
          while (c >= 0x30 && c <= 0x39) {
            if (++i === end) break outer
            c = b[i] as number
          }
        // falls through
        case NUM_ZERO:
          c = b[i] as number
          if (c === 0x2e) {
            state = NUM_DOT
            i++
          } else if ((c | 0x20) === 0x65) {
            state = NUM_E
            i++
          } else {
            if (depth <= trackDepth) skeleton.onEnd(depth, i)
            state = AFTER
          }
          continue
        case NUM_DOT:
          c = b[i] as number
          if (!(c >= 0x30 && c <= 0x39)) throw invalid(`expected a digit after '.', found ${describe(c)}`, i)
          state = NUM_FRAC
          i++
          continue
        case NUM_FRAC:
          c = b[i] as number
          while (c >= 0x30 && c <= 0x39) {
            if (++i === end) break outer
            c = b[i] as number
          }
          if ((c | 0x20) === 0x65) {
            state = NUM_E
            i++
          } else {
            if (depth <= trackDepth) skeleton.onEnd(depth, i)
            state = AFTER
          }
          continue
        case NUM_E:
          c = b[i] as number
          if (c === 0x2b || c === 0x2d) state = NUM_ESIGN
          else if (c >= 0x30 && c <= 0x39) state = NUM_EXP
          else throw invalid(`expected a digit in the exponent, found ${describe(c)}`, i)
          i++
          continue
        case NUM_ESIGN:
          c = b[i] as number
          if (!(c >= 0x30 && c <= 0x39)) throw invalid(`expected a digit in the exponent, found ${describe(c)}`, i)
          state = NUM_EXP
          i++
          continue
        case NUM_EXP:
          c = b[i] as number
          while (c >= 0x30 && c <= 0x39) {
            if (++i === end) break outer
            c = b[i] as number
          }
          if (depth <= trackDepth) skeleton.onEnd(depth, i)
          state = AFTER
          continue
        default: // LITERAL
          if (b[i] !== LITERALS[this.literalAt]) throw invalid(`unexpected ${describe(b[i])}`, i)
          i++
          if (++this.literalAt === this.literalEnd) {
            if (depth <= trackDepth) skeleton.onEnd(depth, i)
            state = AFTER
          }
          continue
      }
    }
    this.i = i
    this.state = state
    this.depth = depth
  }

  /** Ends the scan at the end of the bytes: the skeleton, or the error JSON.parse would have thrown. */
  finish(): Record<string, unknown> {
    const length = this.bytes.length
    const state = this.state
    if (state === NUM_ZERO || state === NUM_INT || state === NUM_FRAC || state === NUM_EXP) {
      if (this.depth <= this.trackDepth) this.skeleton.onEnd(this.depth, length)
      this.state = AFTER
    }
    if (this.state !== AFTER || this.depth !== 0) throw invalid('unexpected end of input', length)
    if (!this.isObject) throw new GatewayError('invalid_request', 'The request body must be a JSON object.')
    return this.skeleton.finish()
  }
}

/**
 * Validates a request body as JSON and returns a skeleton of it: a stand-in for the parsed object that holds
 * only what validation reads (`validateChat`, `validateGenerateContent`), with big values left out.
 *
 * - The whole body is checked against the JSON grammar exactly as `JSON.parse` of its UTF-8 text accepts it,
 *   without recursion (any nesting depth), in slices of `sliceBytes` (default 256 KiB) with a turn of the event
 *   loop between slices. An invalid body, or one that is not an object, throws the GatewayError that
 *   `parseJsonObject` throws (the messages begin alike; the invalid-JSON one names the reason and byte offset).
 * - Every top-level member is present (last duplicate wins; `__proto__` is an own property, as with JSON.parse).
 *   A value whose text spans at most `smallValueBytes` (default 64 KiB, at least 5) is parsed, hence exact; so
 *   are all numbers (a longer one is read from its first 800 significant digits, still exactly), booleans, null
 *   and the empty string. A bigger string is `BIG_STRING`. A bigger array holds one
 *   entry per element, an element being its parsed value when small, else `BIG_STRING` (string), `[]` (array) or
 *   the skeleton of an object. A bigger object (a top-level member, or an array element as above) is a skeleton
 *   object: its members parsed when small, `BIG_STRING` for big strings, big arrays and objects left out.
 *   Members whose key spans more than 64 KiB (or `smallValueBytes` if larger) are left out.
 *
 * The skeleton is for validation only: values standing in for big data (`BIG_STRING`, `[]`, left-out members,
 * partial objects) must never be forwarded, stored or logged as the body. Forward the original bytes. Validation
 * of a skeleton passes or fails exactly as on the parsed body, but a value it hands back can be a stand-in, except
 * for the top-level members named in `exactStrings`: a string there too big to keep is refused with a 400 naming
 * the member, so a stand-in never reaches code that reads the value (the `model` name).
 */
export async function scanJsonObject(
  bytes: Buffer,
  options?: { sliceBytes?: number; smallValueBytes?: number; exactStrings?: readonly string[] },
): Promise<Record<string, unknown>> {
  const sliceBytes = Math.max(1, Math.floor(options?.sliceBytes ?? 256 * 1024))
  // Spans up to 5 bytes (all literals, the empty string) are always small.
  const small = Math.max(5, Math.floor(options?.smallValueBytes ?? 64 * 1024))
  const scanner = new Scanner(bytes, small, new Set(options?.exactStrings))
  const length = bytes.length
  for (let end = Math.min(length, sliceBytes); ; end = Math.min(length, end + sliceBytes)) {
    scanner.run(end)
    if (end === length) break
    await new Promise(setImmediate)
  }
  return scanner.finish()
}
