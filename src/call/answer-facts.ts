import { type AnswerFacts, type Dialect, MAX_CHOICES, MAX_REASON_LENGTH, reasonList } from '../dialects/index.js'
import { objectAfterKey, stringsAfterKey } from '../json/after-key.js'
import type { TokenCounts } from '../types.js'

/** The counts reported for a completed call whose upstream sent no usage (e.g. a chat stream without `include_usage`). */
export const NO_USAGE: Readonly<TokenCounts> = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  cached_input_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
})

/** Bodies up to this size are parsed whole for their facts; bigger ones only in their last `TAIL_BYTES`. */
const PARSE_WHOLE_BYTES = 1024 * 1024
const TAIL_BYTES = 64 * 1024

const NOTHING: AnswerFacts = Object.freeze({ usage: undefined, finishReasons: undefined })

/**
 * Token counts and finish reasons of a complete JSON response body, in the upstream's format; each undefined when
 * the body is not JSON or says nothing of it. A small body is parsed once for both. A large body is never parsed (or
 * decoded) whole: both formats put usage last, and each choice's reason after its content, so both are read from
 * the tail; the reasons of choices that ended before the tail are not seen.
 */
export function factsOfBody(dialect: Dialect, body: Buffer): AnswerFacts {
  if (body.length > PARSE_WHOLE_BYTES) return factsOfTail(dialect, body.subarray(body.length - TAIL_BYTES))
  let response: unknown
  try {
    response = JSON.parse(body.toString('utf8'))
  } catch {
    return NOTHING
  }
  const reasons: string[] = []
  dialect.finishReasons(response, reasons)
  return { usage: dialect.usage(response), finishReasons: reasonList(reasons) }
}

function factsOfTail(dialect: Dialect, tail: Buffer): AnswerFacts {
  const reasons = stringsAfterKey(tail.toString('utf8'), dialect.finishReasonField, MAX_CHOICES, MAX_REASON_LENGTH)
  let usage: TokenCounts | undefined
  try {
    const found = objectAfterKey(tail, dialect.usageField)
    if (found !== undefined) usage = dialect.usage({ [dialect.usageField]: found })
  } catch {
    // A usage object that is not JSON is no usage; the reasons stand on their own.
  }
  return { usage, finishReasons: reasons.length === 0 ? undefined : reasons }
}
