// Anthropic's error types by HTTP status: the `error.type` of every Anthropic-shaped error body, the gateway's own
// and translated upstream errors alike.
import type { ErrorFacts } from '../dialect.js'

const ERROR_TYPE: Partial<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'conflict_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

/** The Anthropic error type of an HTTP status, e.g. `rate_limit_error` for 429. */
export function anthropicErrorType(status: number): string {
  return ERROR_TYPE[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
}

/** Anthropic's error body: `{ type: 'error', error: { type, message }, request_id }`, the id null when none is known. */
export function anthropicErrorBody({ status, message, requestId }: ErrorFacts) {
  return { type: 'error', error: { type: anthropicErrorType(status), message }, request_id: requestId ?? null }
}
