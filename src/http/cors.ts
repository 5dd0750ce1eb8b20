import type { IncomingMessage, ServerResponse } from 'node:http'
import { CLAMPED_HEADER, DROPPED_HEADER } from '../call/translation.js'
import { type ResolvedCors, wildcardMatches } from '../config/cors.js'
import { RATE_LIMIT_HEADERS, REQUEST_ID_HEADERS } from '../dialects/index.js'
import type { Match } from './router.js'

/**
 * Response headers a browser script may read: the request id (under each SDK's name), a replay's mark, the retry
 * hints, the rate-limit headers of a 429, and the hint fields a translation dropped or the values it lowered.
 */
const EXPOSED = [
  'x-request-id',
  ...REQUEST_ID_HEADERS,
  'idempotent-replayed',
  'retry-after',
  'x-should-retry',
  ...RATE_LIMIT_HEADERS,
  DROPPED_HEADER,
  CLAMPED_HEADER,
  // What the response cache did, and the age of a hit.
  'x-model-gateway-cache',
  'age',
].join(', ')
const METHODS = 'GET, POST, DELETE'
/** The OpenAI SDKs send a family of these from browsers (`x-stainless-os`, `-retry-count`, …), more each release. */
const STAINLESS = 'x-stainless-'

/** Adds `field` to the response's `vary`, keeping what the host put there. */
function vary(res: ServerResponse, field: string): void {
  const prior = res.getHeader('vary')
  if (prior === undefined) {
    res.setHeader('vary', field)
    return
  }
  const text = String(prior)
  if (
    !text
      .toLowerCase()
      .split(/\s*,\s*/)
      .includes(field.toLowerCase())
  )
    res.setHeader('vary', `${text}, ${field}`)
}

/**
 * Applies CORS to a request the gateway routes: answers a preflight itself (true), or sets the headers of the actual
 * response with `setHeader`, which every later `writeHead` keeps (false). A request without `Origin` is untouched.
 */
export function createCors(options: ResolvedCors): (req: IncomingMessage, res: ServerResponse, match: Match) => boolean {
  const { origins, wildcards, allowHeaders } = options
  const listed = (origin: string) => origins !== '*' && (origins.has(origin) || wildcards.some((w) => wildcardMatches(w, origin)))
  const maxAge = String(options.maxAgeSeconds)

  /** The requested headers the gateway allows; a browser refuses the preflight if one it asked for is missing. */
  function allowedOf(requested: string | undefined): string {
    if (!requested) return ''
    const names = requested.split(',').map((name) => name.trim().toLowerCase())
    return names.filter((name) => allowHeaders.has(name) || name.startsWith(STAINLESS)).join(', ')
  }

  return (req, res, match) => {
    const origin = req.headers.origin
    if (origin === undefined) return false
    const allowed = origins === '*' ? '*' : listed(origin) ? origin : undefined
    if (origins !== '*') vary(res, 'Origin')
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined
    if (preflight && match.route.kind !== 'not_found') {
      vary(res, 'Access-Control-Request-Headers')
      // An origin not allowed gets an answer without CORS headers: the browser then refuses the call.
      if (allowed !== undefined) {
        res.setHeader('access-control-allow-origin', allowed)
        res.setHeader('access-control-allow-methods', METHODS)
        const headers = allowedOf(req.headers['access-control-request-headers'])
        if (headers) res.setHeader('access-control-allow-headers', headers)
        res.setHeader('access-control-max-age', maxAge)
      }
      res.statusCode = 204
      res.end()
      return true
    }
    if (allowed !== undefined) {
      res.setHeader('access-control-allow-origin', allowed)
      res.setHeader('access-control-expose-headers', EXPOSED)
    }
    return false
  }
}
