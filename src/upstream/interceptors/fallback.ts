import type { ResolvedModel } from '../../config/resolve.js'
import { isGatewayError } from '../../errors.js'
import type { GatewayLogger } from '../../types.js'
import { drain } from '../response.js'
import type { UpstreamRequest, UpstreamResponse } from '../send.js'
import type { UpstreamInterceptor } from './compose.js'

/** Answers that say the upstream did no billable work and another may do better: busy, failing, overloaded. */
const FAILOVER_STATUS = new Set([429, 500, 502, 503, 504, 529])

/**
 * Errors raised before the request could reach a model: no connection, no address, no TLS. A reset or a timeout
 * after the request was sent is none of these: the model may be generating, and that is the recovery case.
 */
const NEVER_SENT = new Set([
  // An open circuit refused the call before anything was sent.
  'CIRCUIT_OPEN',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
])

/**
 * Whether an attempt failed in the upstream's authorizer (no credentials, a token endpoint down): `createSend`
 * authorizes before it dispatches, so nothing was sent, and the upstream's health is not in question.
 */
export const authorizerFailed = (error: unknown): boolean => isGatewayError(error) && error.code === 'upstream_auth_failed'

/** Whether a failed attempt cannot have started billable work upstream. */
export function neverSent(error: unknown): boolean {
  if (!isGatewayError(error)) return false
  if (authorizerFailed(error)) return true
  let cause: unknown = error.cause
  // undici wraps the socket's error; the code may sit one level down.
  for (let depth = 0; depth < 3 && cause; depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && NEVER_SENT.has(code)) return true
    cause = (cause as { cause?: unknown }).cause
  }
  return false
}

/** An attempt that may be followed by a fallback: its answer, or the error it failed with before anything was sent. */
type Failed = { response: UpstreamResponse } | { error: unknown }

/** The request for the next fallback that can take it; those whose format cannot express a field are skipped, each logged. */
function nextFallback(
  current: UpstreamRequest,
  pending: Iterator<ResolvedModel>,
  attemptFor: NonNullable<UpstreamRequest['attemptFor']>,
  logger: GatewayLogger,
): UpstreamRequest | undefined {
  for (let item = pending.next(); !item.done; item = pending.next()) {
    const model = item.value
    const attempt = attemptFor(model)
    if (!('refusedField' in attempt)) {
      const { body, operation, dialectHeaders } = attempt
      return { ...current, model, body, operation, dialectHeaders, key: undefined, attempt: current.attempt + 1 }
    }
    logger.warn('model-gateway: fallback skipped: its format cannot express a field of the request', {
      requestId: current.requestId,
      model: model.id,
      upstream: model.upstream.name,
      field: attempt.refusedField,
    })
  }
  return undefined
}

/**
 * Tries a model's `fallbacks` in order when its upstream could not be reached or answered 429/500/502/503/504/529
 * (after the key pool had its turn): never once a response reached the client, never after a timeout of a call the
 * upstream may still be working on. A fallback of another format gets the request translated; one whose format
 * cannot express a field of it is skipped (a `warn` line names the field): the request was fine for the model the
 * client asked for, so it gets that model's failure rather than a 400. The last model tried answers for the call.
 */
export function fallbacks(logger: GatewayLogger): UpstreamInterceptor {
  return (next) => {
    const withFallbacks = async (request: UpstreamRequest, attemptFor: NonNullable<UpstreamRequest['attemptFor']>) => {
      const pending = request.model.fallbacks[Symbol.iterator]()
      let current = request
      for (;;) {
        let failed: Failed
        try {
          const response = await next(current)
          if (!FAILOVER_STATUS.has(response.statusCode)) return response
          failed = { response }
        } catch (error) {
          if (!neverSent(error)) throw error
          failed = { error }
        }
        const following = nextFallback(current, pending, attemptFor, logger)
        if (following === undefined) {
          if ('error' in failed) throw failed.error
          return failed.response
        }
        if ('response' in failed) await drain(failed.response.body)
        current = following
      }
    }
    // A model without fallbacks goes straight through: no async frame, no promise turn of this interceptor's.
    return (request) => {
      const { attemptFor } = request
      if (request.model.fallbacks.length === 0 || attemptFor === undefined) return next(request)
      return withFallbacks(request, attemptFor)
    }
  }
}
