import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../../errors.js'
import type { GatewayLogger } from '../../types.js'
import { failureCause } from '../failure.js'
import type { UpstreamRequest } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'

/** Statuses an operator wants to hear of: a refused key, a rate limit, an upstream failing. */
const WORTH_A_LINE = (status: number) => status === 401 || status === 403 || status === 429 || status >= 500

/**
 * One `warn` line per failed upstream attempt: request id, upstream and its origin, model, key alias, status or error
 * code (with the cause beneath it: `ECONNREFUSED`, `ENOTFOUND`, a TLS code, a timeout), duration and attempt number.
 * Never a key, never a prompt.
 */
export function attemptLog(logger: GatewayLogger): UpstreamInterceptor {
  // Reactions rather than an async frame: every attempt passes through here, and only a failed one has work to do.
  return (next) => (request) => {
    const started = performance.now()
    return next(request).then(
      (response) => {
        const status = response.statusCode
        if (WORTH_A_LINE(status)) logger.warn(FAILED, { ...facts(request, started), status })
        // A 404 is often the client's (a previous response gone), but not from an upstream whose base URL is doubtful:
        // there every call misses, and the line says what was likely meant.
        else if (status === 404 && request.model.upstream.baseUrlHint !== undefined) {
          logger.warn(FAILED, { ...facts(request, started), status, hint: request.model.upstream.baseUrlHint })
        }
        return response
      },
      (error: unknown) => {
        const cause = failureCause(error)
        logger.warn(FAILED, {
          ...facts(request, started),
          code: isGatewayError(error) ? error.code : 'internal_error',
          ...(cause === undefined ? {} : { cause }),
        })
        throw error
      },
    )
  }
}

const FAILED = 'model-gateway: upstream attempt failed'

/** What a failed attempt's line says of it. */
function facts(request: UpstreamRequest, started: number) {
  return {
    requestId: request.requestId,
    upstream: request.model.upstream.name,
    // Scheme, host and port only: a base URL's path says nothing more about reaching it, and never carries a key.
    origin: request.model.upstream.origin,
    model: request.model.upstreamModel,
    key: (request.key ?? request.model.upstream.keys[0])?.alias,
    attempt: request.attempt,
    durationMs: Math.round(performance.now() - started),
  }
}
