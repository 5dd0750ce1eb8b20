import { GatewayError, isGatewayError } from '../errors.js'

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

/** How deep `failureCause` looks into an error's `cause` chain: deep enough for undici's wrappings, never a loop. */
const MAX_CAUSE_DEPTH = 6

/**
 * What made an upstream call fail, for an operator's log line: the system or library code of the error at the bottom
 * of the chain (`ECONNREFUSED`, `ENOTFOUND`, a TLS code such as `ERR_SSL_WRONG_VERSION_NUMBER` or
 * `DEPTH_ZERO_SELF_SIGNED_CERT`, `UND_ERR_HEADERS_TIMEOUT`), `timeout` for an abort by timer, else the error's name.
 * Never the message: it may carry a URL or an answer's text.
 */
export function failureCause(error: unknown): string | undefined {
  let found: string | undefined
  let current = error
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const { code, name } = current as { code?: unknown; name?: unknown }
    // The gateway's own codes (`upstream_unreachable`) are in the line already; the cause is what lies beneath.
    if (!isGatewayError(current)) {
      if (typeof code === 'string' && code !== '') found = code
      else if (name === 'TimeoutError') found = 'timeout'
      else if (found === undefined && typeof name === 'string' && name !== 'Error') found = name
    }
    // A connection tried on several addresses fails with all their errors: the first says why.
    const errors = (current as { errors?: unknown }).errors
    const next = (current as { cause?: unknown }).cause ?? (Array.isArray(errors) ? errors[0] : undefined)
    current = next
  }
  return found
}
