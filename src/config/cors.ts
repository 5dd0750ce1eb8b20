import { CLIENT_HEADERS } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import { DEFAULTS } from './defaults.js'

/**
 * An origin pattern with one wildcard label, `https://*.a.com`: matches an origin that starts with `prefix`
 * (`https://`), ends with `suffix` (`.a.com`, with the port if one was given) and has exactly one DNS label between.
 */
export interface OriginWildcard {
  prefix: string
  suffix: string
}

/** `cors` after defaults and checks: exact origins as a set, wildcard origins apart, allowed request headers lower-cased. */
export interface ResolvedCors {
  origins: ReadonlySet<string> | '*'
  /** Origins given as `scheme://*.domain[:port]`; empty with `'*'`. */
  wildcards: readonly OriginWildcard[]
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

/** The one form of wildcard origin: a leading `*.` label before a domain of at least two labels. */
const WILDCARD = /^([a-z][a-z0-9+.-]*:\/\/)\*(\.[^*/]+)$/
/** What one wildcard stands for: one DNS label, never a dot (so `*.a.com` never matches `x.y.a.com` or `a.com`). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * A wildcard origin (`https://*.a.com`, `https://*.a.com:8443`) checked through the URL parser with its wildcard
 * replaced by a label, so it is exactly an origin once filled; any other `*` is refused, since it would never match.
 */
function checkedWildcard(value: string, i: number): OriginWildcard {
  const refuse = (): never =>
    fail(
      `cors.origins[${i}] has a wildcard '*' that can never match: only a whole leading label is supported, as in 'https://*.example.com' (one label; not the domain itself), got '${value}'`,
    )
  const parts = WILDCARD.exec(value)
  if (!parts) return refuse()
  const [, prefix, suffix] = parts as unknown as [string, string, string]
  const filled = `${prefix}x${suffix}`
  let origin: string | undefined
  try {
    origin = new URL(filled).origin
  } catch {
    origin = undefined
  }
  // Two labels at least after the wildcard: `https://*.com` would let anyone's site in.
  const host = suffix.replace(/:\d+$/, '')
  if (origin !== filled || host.split('.').length < 3 || !/^[a-z0-9.-]+$/.test(host)) return refuse()
  return { prefix, suffix }
}

/** Whether `origin` is one label in place of the wildcard of `pattern`. */
export function wildcardMatches(pattern: OriginWildcard, origin: string): boolean {
  if (origin.length <= pattern.prefix.length + pattern.suffix.length) return false
  if (!origin.startsWith(pattern.prefix) || !origin.endsWith(pattern.suffix)) return false
  return LABEL.test(origin.slice(pattern.prefix.length, origin.length - pattern.suffix.length))
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
  const wildcards: OriginWildcard[] = []
  if (raw.origins === '*') origins = '*'
  else if (Array.isArray(raw.origins) && raw.origins.length > 0) {
    const exact = new Set<string>()
    raw.origins.forEach((value: unknown, i) => {
      if (typeof value === 'string' && value.includes('*')) wildcards.push(checkedWildcard(value, i))
      else exact.add(checkedOrigin(value, i))
    })
    origins = exact
  } else fail("cors.origins must be '*' or a non-empty array of origins")
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
  return { origins, wildcards, allowHeaders, maxAgeSeconds: maxAge }
}
