// Errors as a Bedrock client reads them (InvokeModel's and Converse's alike): the body `{ message }`, the type in `x-amzn-errortype` (the AWS SDK names
// the exception it raises by it), and in a stream an exception frame of a type ConverseStream declares.
import type { ErrorFacts } from '../dialect.js'

/** The Bedrock error type of each status the gateway answers with. */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  409: 'ConflictException',
  413: 'ValidationException',
  415: 'ValidationException',
  422: 'ValidationException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
  529: 'ServiceUnavailableException',
}

/** The Bedrock error type of an answer of `status`: a client error without one of its own is a validation error. */
export function bedrockErrorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status < 500 ? 'ValidationException' : 'InternalServerException')
}

/** Bedrock's error body. */
export function bedrockErrorBody(error: ErrorFacts): { message: string } {
  return { message: error.message }
}

/** The header Bedrock's SDKs read an error's type from. */
export function bedrockErrorHeaders(error: ErrorFacts): Readonly<Record<string, string>> {
  return { 'x-amzn-errortype': bedrockErrorType(error.status) }
}

/** The exception types a ConverseStream declares, each raised by the AWS SDK as the exception of that name. */
const STREAM_EXCEPTIONS = new Set([
  'InternalServerException',
  'ModelStreamErrorException',
  'ValidationException',
  'ThrottlingException',
  'ServiceUnavailableException',
])

/**
 * The `:exception-type` of a stream broken off with `status`, or with an upstream's own Bedrock `type`: one the
 * stream declares (a type it does not declare would reach the caller as a bare error), lowerCamel as on the wire.
 */
export function streamExceptionType(status: number, type: string | undefined): string {
  const own = type !== undefined && STREAM_EXCEPTIONS.has(type) ? type : undefined
  const byStatus = status === 502 ? 'ModelStreamErrorException' : bedrockErrorType(status)
  const name = own ?? (STREAM_EXCEPTIONS.has(byStatus) ? byStatus : 'InternalServerException')
  return name.charAt(0).toLowerCase() + name.slice(1)
}
