import type { Dialect } from '../dialects/index.js'
import type { TokenCounts } from '../types.js'

/** The counts reported for a completed call whose upstream sent no usage (e.g. a chat stream without `include_usage`). */
export const NO_USAGE: Readonly<TokenCounts> = Object.freeze({ input_tokens: 0, output_tokens: 0, total_tokens: 0 })

/** Bodies up to this size are parsed whole for their usage; bigger ones only in their last `TAIL_BYTES`. */
const PARSE_WHOLE_BYTES = 1024 * 1024
const TAIL_BYTES = 64 * 1024

/**
 * Token counts of a complete JSON response body, or undefined when it is not JSON or carries none. A large body is
 * never parsed (or decoded) whole: its usage object is read from the tail, where both formats put it.
 */
export function usageOfBody(dialect: Dialect, body: Buffer): TokenCounts | undefined {
  try {
    if (body.length <= PARSE_WHOLE_BYTES) return dialect.usage(JSON.parse(body.toString('utf8')))
    const tail = body.subarray(Math.max(0, body.length - TAIL_BYTES))
    const usage = objectAfterKey(tail, dialect.usageField)
    return usage === undefined ? undefined : dialect.usage({ [dialect.usageField]: usage })
  } catch {
    return undefined
  }
}

/** The JSON object that is the value of the last `"key":` in `bytes`, or undefined when there is none whole. */
function objectAfterKey(bytes: Buffer, key: string): unknown {
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
