import { GatewayError } from '../errors.js'

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/** Maps a failed upstream call to a 502 or 504 that names neither the upstream URL nor its key. */
export function upstreamFailure(error: unknown): GatewayError {
  const code = (error as { code?: unknown } | null)?.code
  const name = (error as { name?: unknown } | null)?.name
  if ((typeof code === 'string' && TIMEOUT_CODES.has(code)) || name === 'TimeoutError') {
    return new GatewayError('upstream_timeout', 'The upstream model did not answer in time.', { cause: error })
  }
  return new GatewayError('upstream_unreachable', 'The upstream model could not be reached.', { cause: error })
}

/** The 502 for an upstream answer over `limits.maxResponseBytes`. */
export function upstreamTooLarge(limit: number): GatewayError {
  return new GatewayError('upstream_response_too_large', `The upstream response is larger than the limit of ${limit} bytes.`)
}
