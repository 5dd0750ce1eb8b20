import type { Dialect } from '../dialects/index.js'
import { objectAfterKey } from '../json/last-object.js'
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
