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

/**
 * Which attempt the OpenAI (Stainless) SDKs say this is: `x-stainless-retry-count`, 0 for the first. Undefined when
 * the header is absent or not a count, so other clients are never taken for retries.
 */
export function sdkRetryCountOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers['x-stainless-retry-count']
  if (typeof raw !== 'string' || !/^\d{1,4}$/.test(raw)) return undefined
  return Number(raw)
}
