// The console under `console.path`: the page's three files (shipped in the package, no CDN, a strict CSP) and its
// JSON endpoints under `api/`. Served before the router: the adapters only mount the gateway.
import { createHash, hash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import { sse } from '../dialects/framing/index.js'
import { DEFAULT_DIALECT } from '../dialects/index.js'
import { isGatewayError } from '../errors.js'
import { createAuthenticator } from '../http/auth.js'
import type { AuthOptions, GatewayLogger } from '../types.js'
import { adminBody, type ConsoleCaller, type ConsoleParts, callsBody, sendConsoleError, sendConsoleJson, usageBody } from './api.js'
import { consoleAssets } from './assets.js'
import type { ResolvedConsole } from './options.js'

/** The console reads no key from a query: a URL is shown, logged and kept in history. */
const NO_QUERY = new URLSearchParams()

/** Nothing from anywhere but the console's own files and endpoints; no inline script or style. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** How often a live stream of calls is sent the picture again (elapsed times and bytes move without an event). */
const LIVE_TICK_MS = 1_000
/** How long a start or end waits for others to go out with it on a live stream. */
const LIVE_BATCH_MS = 100

/** One file of the page, ready to send, plain and gzipped. */
interface Asset {
  type: string
  plain: Buffer
  gzip: Buffer
  etag: string
}

function asset(type: string, text: string): Asset {
  const plain = Buffer.from(text, 'utf8')
  return {
    type,
    plain,
    gzip: gzipSync(plain, { level: 9 }),
    etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 22)}"`,
  }
}

/** The console's request handling; `close()` ends its live streams. */
export interface ConsoleServer {
  serve(req: IncomingMessage, res: ServerResponse, url: string): Promise<void>
  close(): void
}

/** Builds the console's handler over its parts. */
export function createConsoleServer(
  options: ResolvedConsole,
  auth: AuthOptions,
  parts: ConsoleParts,
  logger: GatewayLogger,
): ConsoleServer {
  const base = options.path
  const files = consoleAssets(base)
  const assets = new Map<string, Asset>([
    ['/', asset('text/html; charset=utf-8', files.html)],
    ['/app.css', asset('text/css; charset=utf-8', files.css)],
    ['/app.js', asset('text/javascript; charset=utf-8', files.js)],
  ])
  const authenticate = createAuthenticator(auth)
  // Admin keys are compared by digest: a lookup in a set of digests tells nothing of a key by its timing.
  const admins = new Set([...options.adminKeys].map((key) => hash('sha256', key, 'hex')))
  const streams = new Set<() => void>()
  const lastSegment = base.slice(base.lastIndexOf('/') + 1)

  async function callerOf(req: IncomingMessage): Promise<ConsoleCaller | undefined> {
    // The key as the default dialect's clients send it (a bearer token); never from the query, which a page's URL shows.
    const key = DEFAULT_DIALECT.clientKey(req.headers, NO_QUERY)
    if (!key) return undefined
    const admin = admins.has(hash('sha256', key, 'hex'))
    let owner: string | undefined
    try {
      owner = await authenticate(key, req, DEFAULT_DIALECT)
    } catch (error) {
      if (!isGatewayError(error) || error.code !== 'invalid_api_key') throw error
    }
    return owner === undefined && !admin ? undefined : { owner, admin }
  }

  function sendAsset(req: IncomingMessage, res: ServerResponse, file: Asset): void {
    const headers: Record<string, string | number> = {
      'content-type': file.type,
      'cache-control': 'no-cache',
      etag: file.etag,
      vary: 'accept-encoding',
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    }
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, headers)
      res.end()
      return
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
    const body = gzip ? file.gzip : file.plain
    if (gzip) headers['content-encoding'] = 'gzip'
    headers['content-length'] = body.length
    res.writeHead(200, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  function liveCalls(req: IncomingMessage, res: ServerResponse, caller: ConsoleCaller, all: boolean): void {
    res.writeHead(200, {
      'content-type': `${sse.contentType}; charset=utf-8`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
    })
    let soon: NodeJS.Timeout | undefined
    const send = () => {
      soon = undefined
      res.write(`event: calls\ndata: ${JSON.stringify(callsBody(parts, caller, all))}\n\n`)
    }
    send()
    // The timers live only while a console page watches: the console costs nothing when nobody looks. Starts and
    // ends are sent together within LIVE_BATCH_MS: a busy gateway's thousand calls a second are not a thousand writes.
    const timer = setInterval(send, LIVE_TICK_MS)
    const unsubscribe = parts.calls.onChange(() => {
      soon ??= setTimeout(send, LIVE_BATCH_MS)
    })
    const stop = () => {
      clearInterval(timer)
      clearTimeout(soon)
      unsubscribe()
      streams.delete(stop)
      if (!res.writableEnded) res.end()
    }
    streams.add(stop)
    req.once('close', stop)
    res.once('close', stop)
  }

  async function api(req: IncomingMessage, res: ServerResponse, route: string, query: URLSearchParams): Promise<void> {
    const caller = await callerOf(req)
    if (!caller) {
      const sent = req.headers.authorization !== undefined
      return sendConsoleError(
        res,
        401,
        'invalid_api_key',
        sent
          ? 'This key is not an API key of this gateway, nor a console admin key.'
          : `Sign in with a key: send it as ${DEFAULT_DIALECT.keyHint}.`,
      )
    }
    if (req.method !== 'GET') return sendConsoleError(res, 405, 'method_not_allowed', 'The console endpoints are read with GET.')
    const all = query.get('all') === 'true'
    switch (route) {
      case '/api/session':
        return sendConsoleJson(res, 200, { owner: caller.owner ?? null, admin: caller.admin, usageDays: parts.usageDays })
      case '/api/calls':
        return sendConsoleJson(res, 200, callsBody(parts, caller, all))
      case '/api/calls/stream':
        return liveCalls(req, res, caller, all)
      case '/api/admin':
        if (!caller.admin) return sendConsoleError(res, 403, 'forbidden', 'The admin view needs a key listed in console.adminKeys.')
        return sendConsoleJson(res, 200, await adminBody(parts))
    }
    if (route !== '/api/background' && route !== '/api/usage') {
      return sendConsoleError(res, 404, 'not_found', `The console has no endpoint ${route}.`)
    }
    if (caller.owner === undefined) {
      return sendConsoleError(res, 403, 'forbidden', 'An admin key that is not an API key has no recoveries, calls or usage of its own.')
    }
    if (route === '/api/background') return sendConsoleJson(res, 200, { items: await parts.background.list(caller.owner) })
    return sendConsoleJson(res, 200, await usageBody(parts, caller.owner))
  }

  return {
    async serve(req, res, url) {
      const mark = url.indexOf('?')
      const path = (mark === -1 ? url : url.slice(0, mark)).slice(base.length)
      const query = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1))
      try {
        if (path === '') {
          // Relative, so it holds behind any mount or proxy prefix: `/ai/console` → `/ai/console/`.
          res.writeHead(308, { location: `${lastSegment}/`, 'content-length': 0 })
          res.end()
          return
        }
        if (path.startsWith('/api/')) return await api(req, res, path, query)
        const file = assets.get(path)
        if (!file) return sendConsoleError(res, 404, 'not_found', `The console has no file ${path}.`)
        if (req.method !== 'GET' && req.method !== 'HEAD') return sendConsoleError(res, 405, 'method_not_allowed', 'Use GET.')
        sendAsset(req, res, file)
      } catch (error) {
        logger.error('model-gateway: console request failed', { error: error instanceof Error ? error.stack : String(error) })
        const unavailable = isGatewayError(error) && error.code === 'store_unavailable'
        sendConsoleError(
          res,
          unavailable ? 503 : 500,
          unavailable ? 'store_unavailable' : 'internal_error',
          unavailable ? 'The store cannot be reached now; try again shortly.' : 'The console failed to answer.',
        )
      }
    },
    close() {
      for (const stop of [...streams]) stop()
    },
  }
}
