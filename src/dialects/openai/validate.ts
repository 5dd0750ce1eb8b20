import { invalidField as invalid } from '../../errors.js'
import { isObject } from '../../json/value.js'
import { memberCheck, requiredModel, streamFlag } from '../checks.js'
import type { CallTarget } from '../dialect.js'
import { chatRequest } from './chat-completions/wire.js'
import { responsesRequest } from './responses/wire.js'

/** Checks the members of a chat-completions body whose ranges the gateway checks before any upstream sees them. */
const checkChatRanges = memberCheck(chatRequest, [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'max_completion_tokens',
  'max_tokens',
])
/** The same of a Responses body. */
const checkResponsesRanges = memberCheck(responsesRequest, ['temperature', 'top_p', 'max_output_tokens'])

/** Checks a chat-completions body; unknown fields are left alone and pass through. */
export function validateChat(body: Record<string, unknown>): CallTarget {
  const model = requiredModel(body)
  const messages = body.messages
  if (!Array.isArray(messages) || messages.length === 0) invalid('messages', "'messages' must be a non-empty array.")
  let checked: unknown
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i]
    // A big body's elements are shared summaries (see scanJsonBody): one that passed passes again.
    if (message === checked) continue
    if (!isObject(message)) invalid(`messages[${i}]`, `'messages[${i}]' must be an object.`)
    if (typeof message.role !== 'string') {
      invalid(`messages[${i}].role`, `'messages[${i}].role' must be a string.`)
    }
    checked = message
  }
  const stream = streamFlag(body)
  checkChatRanges(body)
  return { model, stream }
}

/** Checks an embeddings body: `model` a string, `input` a string or a non-empty array; the rest passes through. */
export function validateEmbeddings(body: Record<string, unknown>): CallTarget {
  const model = requiredModel(body)
  const input = body.input
  if (typeof input !== 'string' && !(Array.isArray(input) && input.length > 0)) {
    invalid('input', "'input' must be a string or a non-empty array (of strings, or of token arrays).")
  }
  return { model, stream: false }
}

/**
 * Checks a Responses body: `model`, an `input` that is text or a list of items, and the settings the gateway reads.
 * `input` may be absent (a stored prompt or conversation supplies it upstream); unknown fields pass through.
 */
export function validateResponses(body: Record<string, unknown>): CallTarget {
  const model = requiredModel(body)
  const input = body.input
  if (input !== undefined && input !== null && typeof input !== 'string' && !Array.isArray(input)) {
    invalid('input', "'input' must be a string or an array of input items.")
  }
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i]
      if (!isObject(item)) invalid(`input[${i}]`, `'input[${i}]' must be an object.`)
    }
  }
  const stream = streamFlag(body)
  checkResponsesRanges(body)
  return { model, stream }
}
