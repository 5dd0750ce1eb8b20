import type { IncomingMessage, ServerResponse } from 'node:http'
import { hostBody } from '../src/http/read-body.js'
import type { Gateway } from '../src/types.js'

/** The parts of an Express request the adapter reads; `body` is whatever a host body parser left. */
export type ExpressRequest = IncomingMessage & { body?: unknown }

/** Express middleware: `(req, res, next) => void`, typed structurally so this entry never loads `express`. */
export type ExpressMiddleware = (req: ExpressRequest, res: ServerResponse, next: (error?: unknown) => void) => void

/**
 * Middleware for Express 5 (and 4): mount it with `app.use('/ai', expressMiddleware(gateway))`. Requests the
 * gateway does not route go to `next()`, but for mistyped paths under its own route prefixes (`/v1/chat/…`, a doubled
 * `/v1`), which get its JSON 404 and hint; a body a host parser already read (`express.json()`,
 * `express.raw()`) is taken from `req.body`.
 */
export function expressMiddleware(gateway: Gateway): ExpressMiddleware {
  return (req, res, next) => {
    // `app.use` strips the mount path from `req.url` (`req.originalUrl` keeps it): the gateway sees its own paths.
    gateway.handle(req, res, { path: req.url, body: hostBody(req.body) }).then(
      (handled) => {
        if (!handled) next()
      },
      (error: unknown) => {
        // Express's error handlers write a response: only give them one that has not started.
        if (!res.headersSent) next(error)
        else if (!res.writableEnded) res.destroy()
      },
    )
  }
}
