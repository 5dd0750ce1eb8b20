// Google's canonical status names by HTTP status: the `status` of every Google-shaped error body, the gateway's
// own and translated upstream errors alike.

const GOOGLE_STATUS: Partial<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  422: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  // A call its client (or its owner, through the cancel endpoint) stopped: what Google calls it.
  499: 'CANCELLED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/** The Google status name of an HTTP status, e.g. `RESOURCE_EXHAUSTED` for 429. */
export function googleStatus(status: number): string {
  return GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT')
}
