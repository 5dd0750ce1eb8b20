import http from 'node:http'
import { bodyParser } from '@koa/bodyparser'
import express, { type ErrorRequestHandler } from 'express'
import express4 from 'express4'
import Koa from 'koa'
import { describe } from 'vitest'
import { expressMiddleware } from '../../adapters/express.js'
import { koaMiddleware } from '../../adapters/koa.js'
import { nodeHandler } from '../../adapters/node.js'
import type { Gateway } from '../../src/gateway.js'
import { listen, type MountedServer } from './http.js'

/** One way of mounting the gateway in a real server, with what legitimately differs from one to another. */
export interface ServerKind {
  name: string
  mount(gateway: Gateway): Promise<MountedServer>
  /**
   * How a request body reaches the gateway: it reads the stream itself, gets the bytes a host parser kept,
   * or gets the value a host JSON parser made (and forwards its compact re-serialisation).
   */
  body: 'stream' | 'raw' | 'parsed'
  /** Who answers a body that is not JSON: the gateway, or a host JSON parser in front (same status, its own body). */
  badJson: 'gateway' | 'host'
  /** Who answers an unknown path under the mount: the gateway's 404 body, or the host after `next()`. */
  unknownPath: 'gateway' | 'host'
}

/** What the upstream receives, and a record keeps, for a body sent as `text` through a server kind. */
export function forwardedBody(kind: ServerKind, text: string): string {
  return kind.body === 'parsed' ? JSON.stringify(JSON.parse(text)) : text
}

/** A host's JSON error handler, so host failures (parser errors, limits) are recognisable in tests. */
export const hostErrorHandler: ErrorRequestHandler = (error: { status?: number; message?: string }, _req, res, _next) => {
  res.status(error.status ?? 500).json({ host_error: error.message ?? 'error' })
}

/**
 * An Express app the way a host writes one: its own routes, an auth-ish guard on its admin area, the
 * gateway under `/ai` (or at the root), a 404 of its own and an error handler. `before` runs first
 * (body parsers).
 */
export function expressApp(
  gateway: Gateway,
  options: { at: string; before?: express.RequestHandler[]; framework?: typeof express },
): express.Express {
  const app = (options.framework ?? express)()
  for (const handler of options.before ?? []) app.use(handler)
  app.get('/host', (_req, res) => {
    res.send('host route')
  })
  app.use('/admin', (req, res, next) => (req.headers['x-admin'] === 'yes' ? next() : res.status(403).send('forbidden')))
  app.get('/admin/stats', (_req, res) => {
    res.json({ ok: true })
  })
  app.use(options.at, expressMiddleware(gateway))
  app.use((req, res) => {
    res.status(404).send(`host 404 ${req.originalUrl}`)
  })
  app.use(hostErrorHandler)
  return app
}

/** The Koa counterpart of `hostErrorHandler`: host failures answered as recognisable JSON. */
export const koaHostErrors: Koa.Middleware = async (ctx, next) => {
  try {
    await next()
  } catch (error) {
    if (ctx.headerSent) throw error
    const { status, message } = error as { status?: number; message?: string }
    ctx.status = status ?? 500
    ctx.body = { host_error: message ?? 'error' }
  }
}

/** A Koa app the way a host writes one: an error handler and a timing middleware around everything, its own route. */
export function koaApp(gateway: Gateway, options: { prefix?: string; before?: Koa.Middleware[] }): Koa {
  const app = new Koa()
  // Client aborts surface as Koa app errors; they are expected here, not worth printing.
  app.silent = true
  app.use(koaHostErrors)
  app.use(async (ctx, next) => {
    const started = Date.now()
    await next()
    // A no-op for the gateway's answers (headers already out): Koa must not throw on it.
    ctx.set('x-response-time', `${Date.now() - started}ms`)
  })
  for (const middleware of options.before ?? []) app.use(middleware)
  app.use(koaMiddleware(gateway, { prefix: options.prefix }))
  app.use(async (ctx, next) => {
    if (ctx.path === '/host') ctx.body = 'host route'
    else await next()
  })
  return app
}

/** A node:http server around `handler`, listening on a loopback port. */
export const serve = (handler: http.RequestListener, prefix = '') => listen(http.createServer(handler), prefix)

/** node:http servers: the gateway alone at `/`, and under `/ai` next to a host route. */
export const NODE_KINDS: ServerKind[] = [
  {
    name: 'node:http at /',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'gateway',
    mount: (gateway) => serve(nodeHandler(gateway), ''),
  },
  {
    name: 'node:http at /ai',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => {
      const handler = nodeHandler(gateway, { prefix: '/ai' })
      return serve(
        (req, res) =>
          handler(req, res, () => {
            res.statusCode = req.url === '/host' ? 200 : 404
            res.end(req.url === '/host' ? 'host route' : 'host 404')
          }),
        '/ai',
      )
    },
  },
]

const LIMIT = '64mb' // the host parsers' limits sit at the gateway's default, so the gateway's own limit is what is tested

/** Express 5 apps (bare at `/`, at `/ai` among host routes, behind each kind of host body parser), and Express 4. */
export const EXPRESS_KINDS: ServerKind[] = [
  {
    name: 'express at /',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => {
      const app = express()
      app.use(expressMiddleware(gateway))
      return serve(app, '')
    },
  },
  {
    name: 'express at /ai',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => serve(expressApp(gateway, { at: '/ai' }), '/ai'),
  },
  {
    name: 'express.json() in front, at /ai',
    body: 'parsed',
    badJson: 'host',
    unknownPath: 'host',
    mount: (gateway) => serve(expressApp(gateway, { at: '/ai', before: [express.json({ limit: LIMIT })] }), '/ai'),
  },
  {
    name: 'express.raw() in front, at /',
    body: 'raw',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => serve(expressApp(gateway, { at: '/', before: [express.raw({ type: 'application/json', limit: LIMIT })] }), ''),
  },
  {
    // Express 4's json parser leaves `req.body = {}` on requests it skips, and its router strips mounts its own way.
    name: 'express 4 with express.json(), at /ai',
    body: 'parsed',
    badJson: 'host',
    unknownPath: 'host',
    mount: (gateway) => serve(expressApp(gateway, { at: '/ai', framework: express4, before: [express4.json({ limit: LIMIT })] }), '/ai'),
  },
]

/** Koa 3 apps: at `/`, under the `/ai` prefix, and behind `@koa/bodyparser` (which keeps `rawBody`). */
export const KOA_KINDS: ServerKind[] = [
  {
    name: 'koa at /',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => serve(koaApp(gateway, {}).callback(), ''),
  },
  {
    name: 'koa at /ai',
    body: 'stream',
    badJson: 'gateway',
    unknownPath: 'host',
    mount: (gateway) => serve(koaApp(gateway, { prefix: '/ai' }).callback(), '/ai'),
  },
  {
    name: 'koa with @koa/bodyparser, at /ai',
    body: 'raw',
    badJson: 'host',
    unknownPath: 'host',
    mount: (gateway) => serve(koaApp(gateway, { prefix: '/ai', before: [bodyParser({ jsonLimit: LIMIT })] }).callback(), '/ai'),
  },
]

/** Every server kind the end-to-end scenarios run through. */
export const SERVER_KINDS: ServerKind[] = [...NODE_KINDS, ...EXPRESS_KINDS, ...KOA_KINDS]

/**
 * Runs one block of scenarios once per server kind (like h3's describeMatrix): for what an adapter or a host can
 * change, such as how the body arrives, the mount path, fall-through, disconnects, streaming and usage reports.
 */
export function describeMatrix(title: string, body: (kind: ServerKind) => void): void {
  for (const kind of SERVER_KINDS) describe(`${title} [${kind.name}]`, () => body(kind))
}

/**
 * Runs one block of scenarios on the bare node:http kind only: for answers the gateway gives before any of that
 * matters (the model list, auth, content type and validation errors), which every kind would only repeat.
 */
export function describeOnce(title: string, body: (kind: ServerKind) => void): void {
  describe(title, () => body(NODE_KINDS[0]!))
}
