import type { IncomingMessage, ServerResponse } from 'node:http'
import { createAuthenticator, presentedKey } from './auth.js'
import type { PreparsedBody } from './body.js'
import type { GatewayContext } from './context.js'
import { GatewayError, isGatewayError } from './errors.js'
import { type GatewayLogger, type GatewayOptions, resolveOptions } from './options.js'
import { serveModelCall } from './proxy.js'
import { serveRecoveries } from './recoveries.js'
import { newRequestId } from './request-id.js'
import { type ErrorFamily, sendError, sendJson } from './responses.js'
import { type Match, matchRequest } from './router.js'
import { createRecoveryStore } from './store/recovery-store.js'
import { createUpstreamAgent } from './upstream.js'
import { validateGeminiAlt } from './validate.js'

/** What an adapter tells the gateway about a request beyond `req` and `res`. */
export interface HandleOptions {
  /** The path relative to where the gateway is mounted, with its query. @default req.url */
  path?: string
  /** A body the host framework already read. @default undefined (the gateway reads `req`) */
  body?: PreparsedBody
  /** Answer 404 for paths the gateway does not know, instead of leaving them to the host. @default false */
  claimUnknown?: boolean
}

/** A gateway: hand it requests through an adapter, close it on shutdown. */
export interface Gateway {
  /** Serves a request if it is the gateway's; resolves false (and leaves `res` alone) when it is not. */
  handle(req: IncomingMessage, res: ServerResponse, options?: HandleOptions): Promise<boolean>
  /** Stops taking requests, waits for in-flight upstream calls and record writes, then closes the store. */
  close(): Promise<void>
}

const STORE_ERROR_LOG_INTERVAL_MS = 10_000

/** A store that reconnects reports an error per attempt: log the first, then one line per interval with a count. */
function storeErrorReporter(logger: GatewayLogger): (error: unknown) => void {
  let lastLogged = -Infinity
  let suppressed = 0
  return (error) => {
    const now = Date.now()
    if (now - lastLogged < STORE_ERROR_LOG_INTERVAL_MS) {
      suppressed++
      return
    }
    logger.warn('model-gateway: store error', { error: String(error), ...(suppressed > 0 ? { suppressed } : {}) })
    lastLogged = now
    suppressed = 0
  }
}

/** Creates a gateway; throws GatewayError('invalid_options') on bad options. */
export function createGateway(options: GatewayOptions): Gateway {
  const resolved = resolveOptions(options)
  const ctx: GatewayContext = {
    options: resolved,
    agent: createUpstreamAgent(resolved.upstreamMs, resolved.connectMs),
    store: createRecoveryStore({
      keyv: resolved.store,
      maxMemoryBytes: resolved.recovery.maxMemoryBytes,
      onError: storeErrorReporter(resolved.logger),
    }),
  }
  const authenticate = createAuthenticator(resolved.auth)
  const modelList = {
    object: 'list',
    data: [...resolved.models.values()].map((m) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy })),
  }
  // A count, not a set of promises: close() only needs to know when it reaches zero.
  let inFlight = 0
  let drained: (() => void) | undefined
  let closing: Promise<void> | undefined

  const fail = (res: ServerResponse, family: ErrorFamily, error: unknown, requestId: string) => {
    if (!res.headersSent) res.setHeader('x-request-id', requestId)
    if (isGatewayError(error)) return sendError(res, family, error)
    resolved.logger.error('model-gateway: unexpected error', { requestId, error: error instanceof Error ? error.stack : String(error) })
    sendError(res, family, new GatewayError('internal_error', 'The gateway failed to handle this request.'))
  }

  async function serve(req: IncomingMessage, res: ServerResponse, match: Match, requestId: string, init: HandleOptions): Promise<void> {
    const { route, family, query } = match
    switch (route.kind) {
      case 'models':
        res.setHeader('x-request-id', requestId)
        return sendJson(res, 200, modelList)
      case 'not_found':
        throw new GatewayError('not_found', 'Unknown path.')
      case 'method_not_allowed':
        res.setHeader('allow', route.allow)
        throw new GatewayError('method_not_allowed', `Method ${req.method} is not allowed here; use ${route.allow}.`)
    }
    if (closing) throw new GatewayError('gateway_closed', 'The gateway is shutting down.')
    // Model calls put the id into their own `writeHead`; every other answer carries it from here.
    if (route.kind !== 'chat' && route.kind !== 'generateContent') res.setHeader('x-request-id', requestId)
    const owner = await authenticate(presentedKey(req, family, query), req)
    const path = (init.path ?? req.url ?? '').split('?')[0] as string
    if (route.kind === 'chat' || route.kind === 'generateContent') {
      const gemini = route.kind === 'generateContent'
      if (gemini) validateGeminiAlt(route.stream, query.get('alt'))
      return serveModelCall(ctx, req, res, {
        requestId,
        owner,
        family,
        endpoint: gemini ? 'generateContent' : 'chat.completions',
        path,
        model: gemini ? route.model : undefined,
        stream: gemini ? route.stream : undefined,
        preparsed: init.body,
      })
    }
    return serveRecoveries(ctx, req, res, route, owner, query, init.body)
  }

  async function serveSafely(req: IncomingMessage, res: ServerResponse, match: Match, requestId: string, init: HandleOptions): Promise<true> {
    inFlight++
    try {
      await serve(req, res, match, requestId, init)
    } catch (error) {
      fail(res, match.family, error, requestId)
    } finally {
      if (--inFlight === 0) drained?.()
    }
    return true
  }

  return {
    handle(req, res, init = {}) {
      const match = matchRequest(req.method ?? 'GET', init.path ?? req.url ?? '/', init.claimUnknown ?? false)
      if (!match) return Promise.resolve(false)
      return serveSafely(req, res, match, newRequestId(), init)
    },
    close() {
      closing ??= (async () => {
        if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve))
        await ctx.store.close()
        await ctx.agent.close()
      })()
      return closing
    },
  }
}
