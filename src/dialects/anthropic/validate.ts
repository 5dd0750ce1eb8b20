import { invalidField as invalid } from '../../errors.js'
import { isObject } from '../../json/value.js'
import { memberCheck, requiredModel, streamFlag } from '../checks.js'
import type { CallTarget } from '../dialect.js'
import { messagesRequest } from './messages/wire.js'

/** Checks the members of a Messages body whose ranges the gateway checks before any upstream sees them. */
const checkMessagesRanges = memberCheck(messagesRequest, ['max_tokens', 'temperature', 'top_p'])

/** The `messages` every Messages body carries, checked alike for a call and a token count. */
function checkMessages(body: Record<string, unknown>): void {
  const messages = body.messages
  if (!Array.isArray(messages)) invalid('messages', "'messages' must be an array.")
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i]
    if (!isObject(message)) invalid(`messages[${i}]`, `'messages[${i}]' must be an object.`)
  }
}

/**
 * Checks a Messages body's members but `model` and `stream`, which a route may take from its path (Bedrock's
 * InvokeModel); unknown fields are left alone and pass through.
 */
export function validateMessagesMembers(body: Record<string, unknown>): void {
  checkMessages(body)
  checkMessagesRanges(body)
}

/** Checks a Messages body (`POST /v1/messages`); unknown fields are left alone and pass through. */
export function validateMessages(body: Record<string, unknown>): CallTarget {
  const model = requiredModel(body)
  validateMessagesMembers(body)
  return { model, stream: streamFlag(body) }
}

/** Checks a token-count body (`POST /v1/messages/count_tokens`): a Messages body without `max_tokens`. */
export function validateMessagesCountTokens(body: Record<string, unknown>): CallTarget {
  const model = requiredModel(body)
  checkMessages(body)
  return { model, stream: false }
}
