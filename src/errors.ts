const BRAND = Symbol.for('model-gateway.GatewayError')

/** Codes a request can fail with; each answers with the status in `STATUS_BY_CODE`. */
export type HttpErrorCode =
  | 'invalid_api_key'
  | 'unsupported_media_type'
  | 'invalid_request'
  | 'request_too_large'
  | 'request_timeout'
  | 'model_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'recovery_not_found'
  | 'confirmation_required'
  | 'invalid_parameter'
  | 'idempotency_key_invalid'
  | 'idempotency_in_flight'
  | 'idempotency_key_reused'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'upstream_response_too_large'
  | 'upstream_invalid_response'
  | 'upstream_auth_failed'
  | 'upstream_stream_broken'
  | 'upstream_error'
  | 'call_cancelled'
  | 'store_unavailable'
  | 'gateway_closed'
  | 'overloaded'
  | 'internal_error'

/** The code `createGateway` throws with; a construction error, never answered over HTTP. */
export type ConfigErrorCode = 'invalid_options'

/** Every code a GatewayError can carry. */
export type GatewayErrorCode = ConfigErrorCode | HttpErrorCode

/** HTTP status for each request error code; one table so every route answers alike. */
export const STATUS_BY_CODE: Readonly<Record<HttpErrorCode, number>> = {
  invalid_api_key: 401,
  unsupported_media_type: 415,
  invalid_request: 400,
  request_too_large: 413,
  request_timeout: 408,
  model_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  recovery_not_found: 404,
  confirmation_required: 400,
  invalid_parameter: 400,
  idempotency_key_invalid: 400,
  idempotency_in_flight: 409,
  idempotency_key_reused: 422,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  upstream_response_too_large: 502,
  upstream_invalid_response: 502,
  upstream_auth_failed: 502,
  upstream_stream_broken: 502,
  // Only ever an event of a stream a keep-alive had committed: the status the event carries is the upstream's own.
  upstream_error: 502,
  // What proxies log for a request its client closed: nobody is left to read it, and no SDK retries it.
  call_cancelled: 499,
  store_unavailable: 503,
  gateway_closed: 503,
  overloaded: 503,
  internal_error: 500,
}

/** What a GatewayError may carry besides its code and message. */
export interface GatewayErrorOptions {
  /** The request field at fault, named in the error body (`param`). */
  param?: string
  /** Fields rendered into a Recoveries-shaped body ahead of `message` and `reason`. */
  details?: Readonly<Record<string, unknown>>
  /** Sent as `retry-after`: the client may try again after this many seconds. */
  retryAfterSeconds?: number
  /** Sent as `x-should-retry: true`: the OpenAI SDKs come back even where they would not by status alone. */
  shouldRetry?: boolean
  cause?: unknown
}

/** True for a GatewayError from any copy of this package (ESM or CJS). */
export function isGatewayError(value: unknown): value is GatewayError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true
}

/** The one error class of the package; `code` says what went wrong, `param` names the offending field. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode
  readonly param: string | undefined
  readonly details: Readonly<Record<string, unknown>> | undefined
  readonly retryAfterSeconds: number | undefined
  readonly shouldRetry: boolean
  readonly [BRAND] = true

  constructor(code: GatewayErrorCode, message: string, options?: GatewayErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GatewayError'
    this.code = code
    this.param = options?.param
    this.details = options?.details
    this.retryAfterSeconds = options?.retryAfterSeconds
    this.shouldRetry = options?.shouldRetry === true
  }

  /** The HTTP status this error answers with; undefined for `invalid_options`, which no request can cause. */
  get status(): number | undefined {
    return this.code === 'invalid_options' ? undefined : STATUS_BY_CODE[this.code]
  }

  /** `instanceof` by brand, so an error from the ESM copy is an instance of the CJS class and back. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return isGatewayError(value)
  }
}

/** A broken internal invariant: a bug in the gateway or in code calling its internals, never a client's fault. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError'
}

/** Throws an InvariantError when `condition` does not hold; a request that hits one is answered 500 and logged. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(`model-gateway invariant failed: ${message}`)
}

/** Echoes client input in a message: at most 200 characters, so an error never carries megabytes back. */
export function shown(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/** A 400 that names the field at fault. */
export function invalidField(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param })
}
