import { isGatewayError } from '../../errors.js'
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

/** Whether a failed attempt cannot have started billable work upstream. */
export function neverSent(error: unknown): boolean {
  if (!isGatewayError(error)) return false
  let cause: unknown = error.cause
  // undici wraps the socket's error; the code may sit one level down.
  for (let depth = 0; depth < 3 && cause; depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && NEVER_SENT.has(code)) return true
    cause = (cause as { cause?: unknown }).cause
  }
  return false
}

/**
 * Tries a model's `fallbacks` in order when its upstream could not be reached or answered 429/500/502/503/504/529
 * (after the key pool had its turn): never once a response reached the client, never after a timeout of a call the
 * upstream may still be working on. The last model's answer or error is the call's.
 */
export function fallbacks(): UpstreamInterceptor {
  return (next) => async (request) => {
    const chain = request.model.fallbacks
    const { bodyFor } = request
    if (chain.length === 0 || bodyFor === undefined) return next(request)
    let current: UpstreamRequest = request
    for (let i = 0; ; i++) {
      const last = i === chain.length
      let response: UpstreamResponse
      try {
        response = await next(current)
      } catch (error) {
        if (last || !neverSent(error)) throw error
        current = nextModel(current, chain[i], bodyFor)
        continue
      }
      if (last || !FAILOVER_STATUS.has(response.statusCode)) return response
      await drain(response.body)
      current = nextModel(current, chain[i], bodyFor)
    }
  }
}

function nextModel(
  previous: UpstreamRequest,
  model: UpstreamRequest['model'] | undefined,
  bodyFor: NonNullable<UpstreamRequest['bodyFor']>,
) {
  const target = model as UpstreamRequest['model']
  return { ...previous, model: target, body: bodyFor(target), key: undefined, attempt: previous.attempt + 1 }
}
