import { type AnswerFacts, type Dialect, MAX_CHOICES, MAX_REASON_LENGTH, reasonList } from '../dialects/index.js'
import { objectAfterKey, stringsAfterKey, topLevelObjectMember } from '../json/after-key.js'
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

/** How near its end a body's usage must be to be read alone (every format puts it last, or after the answer). */
const USAGE_NEAR_END_BYTES = 4096

/**
 * The token counts of a complete JSON response body when nothing else of it is wanted (the ledger's charge, with no
 * `call:end` subscriber): the outermost object's usage member read alone, without parsing the answer before it,
 * which cost the ledger more than all its other work per call. The same counts as `factsOfBody`'s: where the member
 * cannot be told so (not near the end, or not directly in the outermost object), the body is parsed as there.
 */
export function usageOfBody(dialect: Dialect, body: Buffer): TokenCounts | undefined {
  const found = body.length <= PARSE_WHOLE_BYTES ? topLevelObjectMember(body, dialect.usageField, USAGE_NEAR_END_BYTES) : undefined
  if (found === undefined) return factsOfBody(dialect, body).usage
  return dialect.usage({ [dialect.usageField]: found.value })
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
