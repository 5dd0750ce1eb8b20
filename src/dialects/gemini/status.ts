// Google's error statuses: every Google-shaped error body, the gateway's own and translated upstream errors alike,
// pairs an HTTP status (`error.code`) with a status name (`error.status`) as google.rpc.Code's HTTP mapping does.
// An HTTP status that mapping has no name for is answered as the nearest one it has, so the two always agree.

/** A Google error's HTTP status and the google.rpc.Code name of it. */
export interface GoogleStatus {
  code: number
  status: string
}

/**
 * The name google.rpc.Code gives each HTTP status it maps; of the names that share 400, 409 and 500, the most general.
 * The one table: the gateway's Google errors and the mock Gemini upstream's both read it.
 */
export const GOOGLE_RPC_CODES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  // A call its client (or its owner, through the cancel endpoint) stopped.
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/** HTTP statuses google.rpc.Code has no name for, answered as the one it has that means the same to a client. */
const NEAREST: Readonly<Record<number, GoogleStatus>> = {
  // No method of that HTTP verb on the path: to a Google client, a method that does not exist.
  405: { code: 404, status: 'NOT_FOUND' },
  // The request's deadline (its body's) passed before the call could start.
  408: { code: 504, status: 'DEADLINE_EXCEEDED' },
  // Google answers a body above its limit with 400 INVALID_ARGUMENT, and so a body of a type it does not read.
  413: { code: 400, status: 'INVALID_ARGUMENT' },
  415: { code: 400, status: 'INVALID_ARGUMENT' },
  // An Idempotency-Key reused with another body: not to be retried until the client changes it.
  422: { code: 400, status: 'FAILED_PRECONDITION' },
  // The upstream unreachable or broken, or (529) overloaded: the client may retry this call with a backoff.
  502: { code: 503, status: 'UNAVAILABLE' },
  529: { code: 503, status: 'UNAVAILABLE' },
}

/** The Google status of an error answered with HTTP `status`: `{ code: 429, status: 'RESOURCE_EXHAUSTED' }` for 429. */
export function googleStatus(status: number): GoogleStatus {
  const name = GOOGLE_RPC_CODES[status]
  if (name !== undefined) return { code: status, status: name }
  return NEAREST[status] ?? (status >= 500 ? { code: 500, status: 'INTERNAL' } : { code: 400, status: 'INVALID_ARGUMENT' })
}

/** A `google.protobuf.Duration` in its JSON form (`"37s"`, `"1.5s"`), in ms; undefined for anything else. */
function durationMs(value: unknown): number | undefined {
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value) : null
  return match ? Number(match[1]) * 1000 : undefined
}

/** The wait a Google error body asks for: the `retryDelay` of its `google.rpc.RetryInfo` detail, in ms. */
export function retryInfoMs(body: Buffer): number | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  const details = (parsed as { error?: { details?: unknown } } | null)?.error?.details
  if (!Array.isArray(details)) return undefined
  for (const detail of details as { '@type'?: unknown; retryDelay?: unknown }[]) {
    if (detail?.['@type'] === 'type.googleapis.com/google.rpc.RetryInfo') return durationMs(detail.retryDelay)
  }
  return undefined
}
