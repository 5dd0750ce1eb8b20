// Bedrock's errors: the type in `x-amzn-errortype` (or a stream's `:exception-type`), the body `{ message }`. Each
// type has the status its clients are answered with (DESIGN §22); refusals of the gateway's own credentials stay
// 403, which the call answers as its 502 `upstream_auth_failed`, the upstream's reason in the operator's log.
import type { IncomingHttpHeaders } from 'node:http'

/** The status each Bedrock error type is answered with, where it is not the one Bedrock sent. */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  ValidationException: 400,
  AccessDeniedException: 403,
  UnrecognizedClientException: 403,
  InvalidSignatureException: 403,
  IncompleteSignatureException: 403,
  ExpiredTokenException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 504,
  ServiceUnavailableException: 503,
  ModelNotReadyException: 503,
  InternalServerException: 500,
  ModelErrorException: 502,
  ModelStreamErrorException: 502,
}

/** Error types that say the gateway's own credentials were refused (the caller did nothing wrong). */
const CREDENTIAL_TYPES = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignatureException',
  'ExpiredTokenException',
  'MissingAuthenticationTokenException',
])

/** An error type as Bedrock names it in a header (`ThrottlingException:http://internal.amazon.com/…`) or a stream (`throttlingException`). */
export function errorType(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  const name = raw.split(':')[0] as string
  return name.charAt(0).toUpperCase() + name.slice(1)
}

/** The status of a Bedrock error of `type`; an unknown type keeps the status it came with. */
export function statusOfType(type: string | undefined, status: number): number {
  if (type !== undefined && CREDENTIAL_TYPES.has(type)) return 403
  return (type === undefined ? undefined : STATUS_BY_TYPE[type]) ?? status
}

/** The `x-amzn-errortype` of an answer's headers. */
export function headerType(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['x-amzn-errortype']
  return errorType(Array.isArray(raw) ? raw[0] : raw)
}

/** The message of a Bedrock error body (`{ message }`, or `{ Message }` from AWS's front doors), else its text. */
export function errorMessage(body: Buffer | string): string {
  const text = typeof body === 'string' ? body : body.toString('utf8')
  try {
    const parsed = JSON.parse(text) as { message?: unknown; Message?: unknown; error?: { message?: unknown } }
    // Bedrock's `{ message }`, AWS front doors' `{ Message }`, or the Anthropic shape it was rewritten to.
    const message = parsed.message ?? parsed.Message ?? parsed.error?.message
    if (typeof message === 'string' && message !== '') return message
  } catch {
    // Not JSON: a proxy's page; its text is the message.
  }
  return text.trim() === '' ? 'The upstream model failed.' : text.trim().slice(0, 1000)
}

/** Why Bedrock refused the gateway's credentials, for the log: its error type and message (AWS never echoes a secret). */
export function refusalCause(headers: IncomingHttpHeaders, body: Buffer): string | undefined {
  const type = headerType(headers)
  const message = errorMessage(body).slice(0, 300)
  return type === undefined ? message : `${type}: ${message}`
}
