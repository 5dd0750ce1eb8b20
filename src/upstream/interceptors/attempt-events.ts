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
    // Reactions rather than an async frame: with a subscriber, every attempt passes through here.
    const traced: Send = (request) => {
      if (before.hasSubscribers) addHeaders(gatewayId, request)
      else if (request.headers !== undefined) request.headers = undefined
      const started = performance.now()
      return next(request).then(
        (response) => {
          if (after.hasSubscribers)
            after.publish(attemptMessage(gatewayId, request, performance.now() - started, response.statusCode, undefined))
          return response
        },
        (error: unknown) => {
          if (after.hasSubscribers) {
            const code = isGatewayError(error) ? error.code : 'internal_error'
            after.publish(attemptMessage(gatewayId, request, performance.now() - started, undefined, code))
          }
          throw error
        },
      )
    }
    return (request) => {
      if (after.hasSubscribers || before.hasSubscribers) return traced(request)
      // No extra promise turn on the hot path while nobody listens; a copy of an attempt made while someone did
      // (a fallback's) does not send that attempt's trace context.
      if (request.headers !== undefined) request.headers = undefined
      return next(request)
    }
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

/**
 * Publishes `upstream:request` and gives the request the headers its subscribers added. Set on the request itself,
 * not a copy (a copy per call cost more than the rest of this): this interceptor is the innermost, so it sets them
 * afresh for every attempt, and a request an outer interceptor copied for a later attempt never sends an earlier
 * attempt's trace context.
 */
function addHeaders(gatewayId: string, request: UpstreamRequest): void {
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
  request.headers = message.headers.length === 0 ? undefined : message.headers
}
