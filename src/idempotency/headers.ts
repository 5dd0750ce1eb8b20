import type { IncomingHttpHeaders } from 'node:http'
import { GatewayError } from '../errors.js'

/** The longest `Idempotency-Key` accepted, in characters (Stripe's bound). */
export const MAX_KEY_LENGTH = 255

const VISIBLE_ASCII = /^[\x21-\x7e]+$/
/** An RFC 8941 sf-string: quotes around printable ASCII with `\"` and `\\` escaped. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/

function invalidKey(message: string): never {
  throw new GatewayError('idempotency_key_invalid', message, { param: 'Idempotency-Key' })
}

/**
 * The request's `Idempotency-Key` (IETF httpapi draft): 1–255 visible ASCII characters, or the same as a quoted
 * structured-field string. Undefined when the header is absent; a 400 for anything else, repeated headers included.
 */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['idempotency-key']
  if (raw === undefined) return undefined
  if (typeof raw !== 'string') invalidKey('Idempotency-Key must be sent once.')
  const quoted = SF_STRING.exec(raw)
  const key = quoted ? (quoted[1] as string).replace(/\\(["\\])/g, '$1') : raw
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    invalidKey(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters long.`)
  }
  // Node joins repeated headers with ", ", which the visible-ASCII rule refuses too.
  if (!quoted && !VISIBLE_ASCII.test(key)) {
    invalidKey('Idempotency-Key must be visible ASCII characters (or a quoted string).')
  }
  return key
}

/** One parameter of `amz-sdk-request` (`attempt=2; max=3`, a `ttl=…` before it in some AWS SDKs). */
const AMZ_ATTEMPT = /(?:^|;)\s*attempt=(\d{1,4})\s*(?:;|$)/

/**
 * Which retry an SDK says this request is, 0 for its first try: the OpenAI and Anthropic (Stainless) SDKs'
 * `x-stainless-retry-count`, or the AWS SDKs' `amz-sdk-request: attempt=N; max=M` (attempt 1 is the first try, so
 * attempt N is retry N-1). Undefined when neither is there or neither is a count, so other clients are never taken
 * for retries.
 */
export function sdkRetryCountOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers['x-stainless-retry-count']
  if (typeof raw === 'string' && /^\d{1,4}$/.test(raw)) return Number(raw)
  const amz = headers['amz-sdk-request']
  if (typeof amz !== 'string') return undefined
  const attempt = AMZ_ATTEMPT.exec(amz)
  const n = attempt ? Number(attempt[1]) : 0
  return n >= 1 ? n - 1 : undefined
}

/** What an AWS SDK's `amz-sdk-invocation-id` may be: a UUID as the SDKs send it, or an id of that sort, bounded. */
const INVOCATION_ID = /^[\w-]{1,64}$/

/**
 * The AWS SDKs' `amz-sdk-invocation-id`: one id for every attempt of one SDK call, made anew for the next call. With
 * it, an attempt is joined to the earlier attempts of its own call only, never to another call with the same body.
 * Undefined when absent, repeated or not an id.
 */
export function sdkInvocationIdOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['amz-sdk-invocation-id']
  return typeof raw === 'string' && INVOCATION_ID.test(raw) ? raw : undefined
}
