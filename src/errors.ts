const BRAND = Symbol.for('model-gateway.GatewayError')

/** Every code a GatewayError can carry. */
export type GatewayErrorCode =
  | 'invalid_options'
  | 'invalid_api_key'
  | 'unsupported_media_type'
  | 'invalid_request'
  | 'request_too_large'
  | 'model_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'store_unavailable'
  | 'gateway_closed'
  | 'internal_error'

/** HTTP status for each code; one table so every route answers alike. */
export const STATUS_BY_CODE: Record<GatewayErrorCode, number> = {
  invalid_options: 500,
  invalid_api_key: 401,
  unsupported_media_type: 415,
  invalid_request: 400,
  request_too_large: 413,
  model_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  store_unavailable: 503,
  gateway_closed: 503,
  internal_error: 500,
}

/** The one error class of the package; `code` says what went wrong, `param` names the offending field. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode
  readonly param: string | undefined
  readonly [BRAND] = true

  constructor(code: GatewayErrorCode, message: string, options?: { param?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GatewayError'
    this.code = code
    this.param = options?.param
  }

  /** The HTTP status this error answers with. */
  get status(): number {
    return STATUS_BY_CODE[this.code]
  }
}

/** True for a GatewayError from any copy of this package (ESM or CJS). */
export function isGatewayError(value: unknown): value is GatewayError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true
}
