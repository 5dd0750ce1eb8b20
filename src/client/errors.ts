/** What a `RecoveringFetchError` is made with. */
export interface RecoveringFetchErrorDetails {
  /** The gateway's `x-request-id` of the call, when an answer was seen. */
  requestId: string | undefined
  /** The `Idempotency-Key` every attempt of the call carried. */
  idempotencyKey: string
  /** How many requests the call sent in all (attempts and resumes). */
  attempts: number
  /** The HTTP status of the last answer, when the last attempt got one. */
  status?: number | undefined
  /** The last failure: a network error, a timeout or an error answer. */
  cause?: unknown
}

/**
 * A model call that failed on every base URL and attempt, or a stream that could not be resumed. Carries what the
 * Recoveries API needs later: the call's `requestId` (when an answer was seen) and its `idempotencyKey` (a repeat with
 * the same key is answered from the kept answer, never paid twice).
 */
export class RecoveringFetchError extends Error {
  /** The gateway's `x-request-id` of the call: of its 2xx answer when there was one, else of the last answer seen. */
  readonly requestId: string | undefined
  /** The `Idempotency-Key` every attempt carried. */
  readonly idempotencyKey: string
  /** How many requests the call sent in all. */
  readonly attempts: number
  /** The HTTP status of the last answer, when the last attempt got one. */
  readonly status: number | undefined

  constructor(message: string, details: RecoveringFetchErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'RecoveringFetchError'
    this.requestId = details.requestId
    this.idempotencyKey = details.idempotencyKey
    this.attempts = details.attempts
    this.status = details.status
  }
}

/**
 * The `RecoveringFetchError` behind an error an SDK threw: the error itself, or one in its `cause` chain (the SDKs wrap
 * what `fetch` throws). Recognises errors of another copy of this package by their name and fields.
 */
export function findRecoveringFetchError(error: unknown): RecoveringFetchError | undefined {
  let current = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const candidate = current as Partial<RecoveringFetchError>
    if (current instanceof RecoveringFetchError) return current
    if (candidate.name === 'RecoveringFetchError' && typeof candidate.idempotencyKey === 'string') return current as RecoveringFetchError
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}
