import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../../errors.js'
import { channels, type UpstreamRequestMessage } from '../../observe/channels.js'
import type { Send, UpstreamRequest } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'

/**
 * Publishes `upstream:request` before and `upstream:attempt` after each upstream call, and sends the headers a
 * `upstream:request` subscriber added (trace context); a pass-through while nobody subscribes.
 */
export function attemptEvents(gatewayId: string): UpstreamInterceptor {
  const before = channels.upstreamRequest
  const after = channels.upstreamAttempt
  return (next) => {
    const traced: Send = async (request) => {
      const base = {
        gatewayId,
        requestId: request.requestId,
        upstream: request.model.upstream.name,
        model: request.model.upstreamModel,
        attempt: request.attempt,
      }
      const sent = before.hasSubscribers ? withAddedHeaders(request, base) : request
      const started = performance.now()
      try {
        const response = await next(sent)
        if (after.hasSubscribers) after.publish({ ...base, durationMs: performance.now() - started, status: response.statusCode })
        return response
      } catch (error) {
        if (after.hasSubscribers) {
          after.publish({ ...base, durationMs: performance.now() - started, error: isGatewayError(error) ? error.code : 'internal_error' })
        }
        throw error
      }
    }
    // No extra promise turn on the hot path while nobody listens.
    return (request) => (after.hasSubscribers || before.hasSubscribers ? traced(request) : next(request))
  }
}

/** Publishes `upstream:request`; the request with whatever headers its subscribers added. */
function withAddedHeaders(request: UpstreamRequest, base: Omit<UpstreamRequestMessage, 'provider' | 'operation' | 'stream' | 'headers'>) {
  const message: UpstreamRequestMessage = {
    ...base,
    provider: request.model.upstream.dialect.otelProviderName,
    operation: request.operation,
    stream: request.stream,
    headers: [],
  }
  channels.upstreamRequest.publish(message)
  return message.headers.length === 0 ? request : { ...request, headers: message.headers }
}
