import type { IncomingMessage, ServerResponse } from 'node:http'
import { hostBody } from '../src/http/read-body.js'
import { normalisePrefix, pathUnderPrefix } from '../src/http/router.js'
import type { Gateway } from '../src/types.js'

/** Options of `koaMiddleware`. */
export interface KoaMiddlewareOptions {
  /** Path the gateway lives under, e.g. `/ai` (Koa has no mount path of its own). @default '' */
  prefix?: string
}

/** The parts of a Koa context the adapter uses, typed structurally so this entry never loads `koa`. */
export interface KoaContext {
  req: IncomingMessage
  res: ServerResponse
  url: string
  respond?: boolean
  /** `body` and `rawBody` are read when a host body parser (`@koa/bodyparser`) set them. */
  request: object
}

/** Koa middleware: `(ctx, next) => Promise<void>`. */
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<void>

/**
 * Middleware for Koa 3: `app.use(koaMiddleware(gateway, { prefix: '/ai' }))`. Requests the gateway does not
 * route go on to `await next()`, but for mistyped paths under its own route prefixes (`/v1/chat/…`, a doubled
 * `/v1`), which get its JSON 404 and hint; a body `@koa/bodyparser` already read is taken from `rawBody` or `body`.
 */
export function koaMiddleware(gateway: Gateway, options: KoaMiddlewareOptions = {}): KoaMiddleware {
  const prefix = normalisePrefix(options.prefix)
  return async (ctx, next) => {
    const path = pathUnderPrefix(prefix, ctx.url)
    const request = ctx.request as { body?: unknown; rawBody?: unknown }
    const handled =
      path !== undefined &&
      (await gateway.handle(ctx.req, ctx.res, { path, body: hostBody(request.body, request.rawBody) }).catch((error: unknown) => {
        // Koa only logs an error once headers are out and leaves the response open: cut it instead.
        if (ctx.res.headersSent && !ctx.res.writableEnded) ctx.res.destroy()
        throw error
      }))
    if (handled) {
      // The gateway wrote to `ctx.res` itself; Koa must not answer again.
      ctx.respond = false
      return
    }
    await next()
  }
}
