import { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici'
import { fail } from '../config/checks.js'
import { isObject } from '../json/value.js'

/** undici's interceptor: wraps the `dispatch` of the dispatcher below it, returns the one a request calls. */
export type EgressInterceptor = Dispatcher.DispatcherComposeInterceptor

/** How upstream requests leave the process: `interceptors`, `dispatcher` and `proxy`, checked. */
export interface EgressOptions {
  /** The interceptors, the first outermost (empty: none, and no per-call cost). */
  interceptors: readonly EgressInterceptor[]
  /** The operator's own dispatcher, used instead of the gateway's agent (never closed by the gateway). */
  dispatcher: Dispatcher | undefined
  /** `'env'`: the gateway's agent honours `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY`. */
  proxy: 'env' | undefined
}

/** The gateway's own pool and what its upstream calls are sent through. */
export interface UpstreamAgent {
  /** What calls are dispatched on: the pool (or the operator's dispatcher) behind the interceptors. */
  dispatcher: Dispatcher
  /** The pool the gateway made and closes on shutdown; undefined when the operator gave their own dispatcher. */
  owned: Agent | EnvHttpProxyAgent | undefined
}

/** Whether `value` can carry requests: a Dispatcher, recognised by what it does (any copy of undici). */
export function isDispatcher(value: unknown): value is Dispatcher {
  return isObject(value) && typeof value.dispatch === 'function'
}

/** Checks `interceptors`, `dispatcher` and `proxy`. */
export function resolveEgress(raw: { interceptors?: unknown; dispatcher?: unknown; proxy?: unknown }): EgressOptions {
  const { interceptors = [], dispatcher, proxy } = raw
  if (!Array.isArray(interceptors) || interceptors.some((interceptor) => typeof interceptor !== 'function')) {
    fail('interceptors must be an array of undici interceptors, (dispatch) => dispatch')
  }
  if (dispatcher !== undefined && !isDispatcher(dispatcher)) fail('dispatcher must be an undici Dispatcher (an Agent, Pool, ProxyAgent…)')
  if (proxy !== undefined && proxy !== 'env') fail("proxy must be 'env' (HTTPS_PROXY, HTTP_PROXY and NO_PROXY)")
  // Both would say how to reach the network, and the gateway would have to pick one without being told which.
  if (proxy !== undefined && dispatcher !== undefined) fail("dispatcher and proxy: 'env' cannot both be set; give the dispatcher a proxy")
  return { interceptors: interceptors as EgressInterceptor[], dispatcher, proxy }
}

/**
 * `dispatcher` behind `interceptors`, the first listed outermost: a request meets them in the order they are listed,
 * as Express middleware reads. undici's `compose` makes its last argument outermost, so they are handed over reversed.
 * No interceptors: `dispatcher` itself, with no wrapping to pay for per call.
 */
export function withInterceptors(dispatcher: Dispatcher, interceptors: readonly EgressInterceptor[]): Dispatcher {
  if (interceptors.length === 0) return dispatcher
  // undici's own compose, which also adapts handlers to the API its interceptors are written for; it works on any
  // object with `dispatch`, so a dispatcher of another copy of undici is composed the same way.
  return Dispatcher.prototype.compose.apply(dispatcher, [...interceptors].reverse())
}

/**
 * One keep-alive connection pool per gateway (timeouts come from the gateway's options, not undici's 300 s), or the
 * operator's dispatcher; behind the gateway's interceptors either way.
 */
export function createUpstreamAgent(timeouts: { upstreamMs: number; connectMs: number }, egress?: EgressOptions): UpstreamAgent {
  if (egress?.dispatcher !== undefined) return { dispatcher: withInterceptors(egress.dispatcher, egress.interceptors), owned: undefined }
  const options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 10 * 60_000,
    headersTimeout: timeouts.upstreamMs,
    bodyTimeout: timeouts.upstreamMs,
    connect: { timeout: timeouts.connectMs },
  }
  const owned = egress?.proxy === 'env' ? new EnvHttpProxyAgent(options) : new Agent(options)
  return { dispatcher: withInterceptors(owned, egress?.interceptors ?? []), owned }
}
