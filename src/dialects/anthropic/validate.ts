import { invalidField as invalid } from '../../errors.js'
import { isObject } from '../../json/value.js'
import type { CallTarget } from '../dialect.js'

function numberIn(body: Record<string, unknown>, field: string, min: number, max: number): void {
  const value = body[field]
  if (value === undefined || value === null) return
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    invalid(field, `'${field}' must be a number from ${min} to ${max}.`)
  }
}

/** The model and `messages` every Messages body carries, checked alike for a call and a token count. */
function modelAndMessages(body: Record<string, unknown>): string {
  if (typeof body.model !== 'string' || body.model === '') invalid('model', "'model' is required and must be a string.")
  const messages = body.messages
  if (!Array.isArray(messages)) invalid('messages', "'messages' must be an array.")
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i]
    if (!isObject(message)) invalid(`messages[${i}]`, `'messages[${i}]' must be an object.`)
  }
  return body.model
}

/** Checks a Messages body (`POST /v1/messages`); unknown fields are left alone and pass through. */
export function validateMessages(body: Record<string, unknown>): CallTarget {
  const model = modelAndMessages(body)
  const maxTokens = body.max_tokens
  // 0 is allowed, as the API allows it: a call that only warms the prompt cache generates nothing.
  if (typeof maxTokens !== 'number' || !Number.isSafeInteger(maxTokens) || maxTokens < 0) {
    invalid('max_tokens', "'max_tokens' is required and must be an integer of at least 0.")
  }
  numberIn(body, 'temperature', 0, 1)
  numberIn(body, 'top_p', 0, 1)
  const stream = body.stream
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') invalid('stream', "'stream' must be a boolean.")
  return { model, stream: stream === true }
}

/** Checks a token-count body (`POST /v1/messages/count_tokens`): a Messages body without `max_tokens`. */
export function validateMessagesCountTokens(body: Record<string, unknown>): CallTarget {
  return { model: modelAndMessages(body), stream: false }
}
