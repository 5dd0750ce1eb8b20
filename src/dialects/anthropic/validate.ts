import { invalidField as invalid } from '../../errors.js'
import { isObject } from '../../json/value.js'
import { numberIn, requiredModel, streamFlag } from '../checks.js'
import type { CallTarget } from '../dialect.js'

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
  const maxTokens = body.max_tokens
  // 0 is allowed, as the API allows it: a call that only warms the prompt cache generates nothing.
  if (typeof maxTokens !== 'number' || !Number.isSafeInteger(maxTokens) || maxTokens < 0) {
    invalid('max_tokens', "'max_tokens' is required and must be an integer of at least 0.")
  }
  numberIn(body, 'temperature', 0, 1)
  numberIn(body, 'top_p', 0, 1)
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
