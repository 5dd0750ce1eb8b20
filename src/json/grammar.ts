// The grammar half of the body scanner: a byte-level state machine that validates a body in slices, without
// recursion, and reports where each value at levels 0..keptLevels of an object body begins and ends to the
// SkeletonBuilder (skeleton.ts), which alone decides what to keep. The skeleton's only per-value input is
// those calls, so the hot loop here touches no skeleton state.
import { GatewayError } from '../errors.js'
import { LONG_NUMBER, numberOverflow, tooDeep } from './inspect.js'
import { numberAt } from './number.js'
import { SkeletonBuilder } from './skeleton.js'

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
export class Scanner {
  i = 0
  state = VALUE
  depth = 0
  stack = new Uint8Array(64)
  /** `keptLevels` while the top-level value is an object (levels 1..keptLevels are reported), -1 otherwise. */
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

  /** Where the number being scanned began. */
  numStart = 0

  constructor(
    readonly bytes: Buffer,
    small: number,
    exactStrings: ReadonlySet<string>,
    readonly maxDepth: number,
    singleKeys: ReadonlySet<string>,
    /** Whether numbers that overflow a double are refused (with rules) or read as JSON.parse would (Infinity). */
    readonly checkNumbers: boolean,
    /**
     * How many levels the skeleton is told of: 3 when members of array elements are read (`elementFields`), else 2,
     * or 0 when only the grammar and the rules are checked.
     */
    readonly keptLevels: 0 | 2 | 3,
    elementFields: readonly string[],
  ) {
    this.skeleton = new SkeletonBuilder(bytes, small, exactStrings, singleKeys, elementFields)
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
                trackDepth = this.isObject ? this.keptLevels : -1
                this.trackDepth = trackDepth
              } else {
                skeleton.onStart(depth, i, this.keyStart, this.keyEnd)
              }
            }
            if (c === 0x22) {
              state = STRING
            } else if (c === 0x7b || c === 0x5b) {
              if (depth === this.maxDepth) throw tooDeep(this.maxDepth, i)
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
              this.numStart = i
              state = NUM_INT
            } else if (c === 0x30) {
              this.numStart = i
              state = NUM_ZERO
            } else if (c === 0x2d) {
              this.numStart = i
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
            if (this.checkNumbers && i - this.numStart > LONG_NUMBER) this.checkNumber(i)
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
            if (this.checkNumbers && i - this.numStart > LONG_NUMBER) this.checkNumber(i)
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
          if (this.checkNumbers) this.checkNumber(i)
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

  /** Refuses a number (from `numStart` to `end`) that no double can hold, as the small-body path does. */
  checkNumber(end: number): void {
    if (!Number.isFinite(numberAt(this.bytes, this.numStart, end))) throw numberOverflow(this.numStart)
  }

  /** Ends the scan at the end of the bytes: the skeleton, or the error JSON.parse would have thrown. */
  finish(): Record<string, unknown> {
    const length = this.bytes.length
    const state = this.state
    if (state === NUM_ZERO || state === NUM_INT || state === NUM_FRAC || state === NUM_EXP) {
      if (this.checkNumbers && (state === NUM_EXP || length - this.numStart > LONG_NUMBER)) this.checkNumber(length)
      if (this.depth <= this.trackDepth) this.skeleton.onEnd(this.depth, length)
      this.state = AFTER
    }
    if (this.state !== AFTER || this.depth !== 0) throw invalid('unexpected end of input', length)
    if (!this.isObject) throw new GatewayError('invalid_request', 'The request body must be a JSON object.')
    return this.skeleton.finish()
  }
}
