import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../../errors.js'
import { channels } from '../../observe/channels.js'
import type { Send } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'

/** Publishes one `upstream:attempt` message per upstream call; a pass-through while nobody subscribes. */
export function attemptEvents(gatewayId: string): UpstreamInterceptor {
  const channel = channels.upstreamAttempt
  return (next) => {
    const traced: Send = async (request) => {
      const started = performance.now()
      const base = {
        gatewayId,
        requestId: request.requestId,
        upstream: request.model.upstream.name,
        model: request.model.upstreamModel,
        attempt: request.attempt,
      }
      try {
        const response = await next(request)
        channel.publish({ ...base, durationMs: performance.now() - started, status: response.statusCode })
        return response
      } catch (error) {
        channel.publish({ ...base, durationMs: performance.now() - started, error: isGatewayError(error) ? error.code : 'internal_error' })
        throw error
      }
    }
    // No extra promise turn on the hot path while nobody listens.
    return (request) => (channel.hasSubscribers ? traced(request) : next(request))
  }
}
