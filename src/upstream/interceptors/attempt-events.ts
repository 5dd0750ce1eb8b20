import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../../errors.js'
import { channels, type UpstreamAttemptMessage, type UpstreamRequestMessage } from '../../observe/channels.js'
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
      const sent = before.hasSubscribers ? withAddedHeaders(gatewayId, request) : request
      const started = performance.now()
      try {
        const response = await next(sent)
        if (after.hasSubscribers)
          after.publish(attemptMessage(gatewayId, request, performance.now() - started, response.statusCode, undefined))
        return response
      } catch (error) {
        if (after.hasSubscribers) {
          const code = isGatewayError(error) ? error.code : 'internal_error'
          after.publish(attemptMessage(gatewayId, request, performance.now() - started, undefined, code))
        }
        throw error
      }
    }
    // No extra promise turn on the hot path while nobody listens.
    return (request) => (after.hasSubscribers || before.hasSubscribers ? traced(request) : next(request))
  }
}

/** The `upstream:attempt` message, built in one literal (a spread per message costs more than it reads). */
function attemptMessage(
  gatewayId: string,
  request: UpstreamRequest,
  durationMs: number,
  status: number | undefined,
  error: string | undefined,
): UpstreamAttemptMessage {
  const message: UpstreamAttemptMessage = {
    gatewayId,
    requestId: request.requestId,
    upstream: request.model.upstream.name,
    model: request.model.upstreamModel,
    attempt: request.attempt,
    durationMs,
  }
  if (status !== undefined) message.status = status
  if (error !== undefined) message.error = error
  return message
}

/** Publishes `upstream:request`; the request with whatever headers its subscribers added. */
function withAddedHeaders(gatewayId: string, request: UpstreamRequest): UpstreamRequest {
  const message: UpstreamRequestMessage = {
    gatewayId,
    requestId: request.requestId,
    upstream: request.model.upstream.name,
    provider: request.model.upstream.dialect.otelProviderName,
    operation: request.operation,
    model: request.model.upstreamModel,
    stream: request.stream,
    attempt: request.attempt,
    headers: [],
  }
  channels.upstreamRequest.publish(message)
  return message.headers.length === 0 ? request : { ...request, headers: message.headers }
}
