import { CLIENT_HEADERS } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import { DEFAULTS } from './defaults.js'

/** `cors` after defaults and checks: origins as a set, allowed request headers lower-cased. */
export interface ResolvedCors {
  origins: ReadonlySet<string> | '*'
  /** Request headers a browser may send, besides any `x-stainless-*`. */
  allowHeaders: ReadonlySet<string>
  maxAgeSeconds: number
}

/**
 * Request headers each dialect's SDKs send from a browser, and the ones the gateway reads whatever the dialect
 * (`last-event-id`: model-gateway/client resumes a stream with it).
 */
const SDK_HEADERS = [...CLIENT_HEADERS, 'content-type', 'idempotency-key', 'last-event-id', 'traceparent', 'tracestate']

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

function fail(message: string): never {
  throw new GatewayError('invalid_options', message)
}

/** An origin as browsers send it: scheme, host and port only (`https://app.example.com`), never `null`. */
function checkedOrigin(value: unknown, i: number): string {
  if (typeof value !== 'string') fail(`cors.origins[${i}] must be a string`)
  let origin: string | undefined
  try {
    origin = new URL(value).origin
  } catch {
    origin = undefined
  }
  if (origin !== value || origin === 'null') {
    fail(
      `cors.origins[${i}] must be an origin such as 'https://app.example.com' (scheme, host and port; no path or trailing slash), got '${value}'`,
    )
  }
  return origin
}

/** Checks `cors` (its unknown keys are rejected by the caller); undefined when it is not set: CORS off. */
export function resolveCors(raw: Record<string, unknown> | undefined): ResolvedCors | undefined {
  if (raw === undefined) return undefined
  let origins: ResolvedCors['origins']
  if (raw.origins === '*') origins = '*'
  else if (Array.isArray(raw.origins) && raw.origins.length > 0) origins = new Set(raw.origins.map(checkedOrigin))
  else fail("cors.origins must be '*' or a non-empty array of origins")
  const allowHeaders = new Set(SDK_HEADERS)
  if (raw.allowHeaders !== undefined) {
    if (!Array.isArray(raw.allowHeaders)) fail('cors.allowHeaders must be an array of header names')
    for (const name of raw.allowHeaders) {
      if (typeof name !== 'string' || !TOKEN.test(name)) fail(`cors.allowHeaders holds '${String(name)}', which is not a header name`)
      allowHeaders.add(name.toLowerCase())
    }
  }
  const maxAge = raw.maxAgeSeconds ?? DEFAULTS.cors.maxAgeSeconds
  if (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0) {
    fail(`cors.maxAgeSeconds must be an integer >= 0, got ${String(raw.maxAgeSeconds)}`)
  }
  return { origins, allowHeaders, maxAgeSeconds: maxAge }
}
