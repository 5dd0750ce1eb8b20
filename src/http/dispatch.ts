import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Dialect } from '../dialects/index.js'
import { GatewayError, isGatewayError } from '../errors.js'
import type { Runtime } from '../runtime.js'
import type { HandleOptions, PreparsedBody } from '../types.js'
import { createAuthenticator } from './auth.js'
import { sendError } from './reply.js'
import { newRequestId, setRequestId } from './request-id.js'
import { type Match, type Route, unknownPathMessage } from './router.js'

/** One authenticated request on its way to a handler. */
export interface Exchange {
  req: IncomingMessage
  res: ServerResponse
  requestId: string
  match: Match
  /** The owner id (a digest, never the key). */
  owner: string
  /** The gateway path, without its query. */
  path: string
  /** A body the host framework already read, if any. */
  preparsed: PreparsedBody | undefined
  /** `performance.now()` when the request reached the gateway. */
  startedAt: number
}

/** The recovery routes, as the router tells them apart. */
export type RecoveryRoute = Extract<Route, { kind: `recoveries.${string}` }>

/** A background call by its id, as the router matched it. */
export type BackgroundRoute = Extract<Route, { kind: 'background' }>

/** A model call, as the router matched it. */
export type CallRoute = Extract<Route, { kind: 'call' }>

/** What the dispatcher hands each route to: the gateway's own endpoints, and one handler for every model call. */
export interface Handlers {
  models(res: ServerResponse, dialect: Dialect): void
  /** `GET /v1/health`: answered without a key. */
  health(res: ServerResponse): Promise<void>
  /** One model, or a 404 naming it. */
  model(res: ServerResponse, dialect: Dialect, id: string): void
  /** Every model call of every dialect. */
  call(ex: Exchange, route: CallRoute): Promise<void>
  recoveries(ex: Exchange, route: RecoveryRoute): Promise<void>
  /** A background call's state, events, cancel or delete. */
  background(ex: Exchange, route: BackgroundRoute): Promise<void>
}

/**
 * The one place where a routed request gets its id and owner and where every error is answered: handlers throw,
 * the dispatcher renders in the shape the route speaks (and logs what is not a GatewayError).
 */
export function createDispatch(rt: Runtime, handlers: Handlers, isClosing: () => boolean) {
  const authenticate = createAuthenticator(rt.options.auth)

  /**
   * Routes a request to its handler. Not an async function: a model call's promise is handed on as the handler made
   * it, where an async frame awaiting it cost a promise and a turn more. A throw is the dispatcher's to catch.
   */
  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    match: Match,
    requestId: string,
    init: HandleOptions,
    startedAt: number,
  ): unknown {
    const { route } = match
    switch (route.kind) {
      case 'models':
        setRequestId(res, match.dialect, requestId)
        return handlers.models(res, match.dialect)
      case 'model':
        setRequestId(res, match.dialect, requestId)
        return handlers.model(res, match.dialect, route.id)
      case 'health':
        setRequestId(res, match.dialect, requestId)
        return handlers.health(res)
      case 'not_found':
        throw new GatewayError('not_found', unknownPathMessage(req.method ?? 'GET', (init.path ?? req.url ?? '').split('?')[0] as string))
      case 'method_not_allowed':
        res.setHeader('allow', route.allow)
        throw new GatewayError('method_not_allowed', `Method ${req.method} is not allowed here; use ${route.allow}.`)
    }
    if (isClosing()) throw new GatewayError('gateway_closed', 'The gateway is shutting down.')
    // Model calls put the id into their own `writeHead`; every other answer carries it from here.
    if (route.kind !== 'call') setRequestId(res, match.dialect, requestId)
    const presented = authenticate(match.dialect.clientKey(req.headers, match.query), req, match.dialect)
    const url = init.path ?? req.url ?? ''
    const mark = url.indexOf('?')
    const path = mark === -1 ? url : url.slice(0, mark)
    // The owner is written in before any handler sees the exchange: at once, or once authenticate() settles.
    const ex: Exchange = { req, res, requestId, match, owner: '', path, preparsed: init.body, startedAt }
    if (typeof presented === 'string') {
      ex.owner = presented
      return serveOwned(route, ex)
    }
    return presented.then((owner) => {
      ex.owner = owner
      return serveOwned(route, ex)
    })
  }

  /** `serve` once the caller's owner is known. */
  function serveOwned(route: CallRoute | BackgroundRoute | RecoveryRoute, ex: Exchange): Promise<void> {
    if (route.kind === 'call') {
      rt.console?.watchCall(ex.requestId, ex.res)
      return handlers.call(ex, route)
    }
    if (route.kind === 'background') return handlers.background(ex, route)
    return handlers.recoveries(ex, route)
  }

  function fail(res: ServerResponse, match: Match, error: unknown, requestId: string): void {
    if (!res.headersSent) setRequestId(res, match.dialect, requestId)
    const to = { dialect: match.dialect, requestId }
    if (isGatewayError(error)) {
      sendError(res, error, to)
      return
    }
    rt.options.logger.error('model-gateway: unexpected error', { requestId, error: error instanceof Error ? error.stack : String(error) })
    sendError(res, new GatewayError('internal_error', 'The gateway failed to handle this request.'), to)
  }

  /**
   * Serves one routed request to its end, then `after`, whose result it resolves with; never rejects. One reaction
   * takes both ends: an async frame awaiting `serve` and a `then` of the caller's after it took two turns more.
   */
  return function dispatch<T>(
    req: IncomingMessage,
    res: ServerResponse,
    match: Match,
    init: HandleOptions,
    startedAt: number,
    after: () => T,
  ): Promise<T> {
    const requestId = newRequestId()
    let served: Promise<unknown>
    try {
      // A handler's own promise is taken as it is (no turn more); anything else settles at once.
      served = Promise.resolve(serve(req, res, match, requestId, init, startedAt))
    } catch (error) {
      served = Promise.reject(error)
    }
    return served.then(after, (error: unknown) => {
      fail(res, match, error, requestId)
      return after()
    })
  }
}
