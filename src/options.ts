import type { IncomingMessage } from 'node:http'
import type Keyv from 'keyv'
import { GatewayError } from './errors.js'
import type { Endpoint } from './types.js'

/** The wire format of an upstream API. */
export type UpstreamType = 'openai' | 'gemini'

/** One upstream API the gateway forwards to. */
export interface UpstreamOptions {
  /** `openai`: any OpenAI-compatible chat-completions API; `gemini`: the Gemini API. */
  type: UpstreamType
  /** Base URL, e.g. `https://api.openai.com/v1` or `https://generativelanguage.googleapis.com`. */
  baseUrl: string
  /** The gateway's own key for this upstream; never shown to clients. @default undefined (no key sent) */
  apiKey?: string
  /** Extra headers sent with every upstream request. @default {} */
  headers?: Record<string, string>
}

/** One model the gateway offers. */
export interface ModelOptions {
  /** The name clients use. */
  id: string
  /** Key into `upstreams`. */
  upstream: string
  /** The name sent upstream. @default id */
  upstreamModel?: string
  /** `owned_by` in the model list. @default the upstream's key */
  ownedBy?: string
  /** `created` in the model list, Unix seconds. @default the time the gateway was created */
  created?: number
}

/** What `authenticate` returns for an accepted key. */
export interface AuthResult {
  /** Stable id of the caller; records are private to it. Hashed before use. */
  owner: string
}

/** How clients prove who they are: a fixed key list, or your own check. */
export type AuthOptions =
  | { apiKeys: readonly string[] }
  | { authenticate: (apiKey: string, req: IncomingMessage) => AuthResult | null | Promise<AuthResult | null> }

/** Recovery settings. */
export interface RecoveryOptions {
  /** Keep captured records this long. @default 259200000 (3 days) */
  ttlMs?: number
  /** Request bodies above this many bytes are stored as `__OMITTED_TOO_LARGE__`. @default 20971520 (20 MiB) */
  maxStoredRequestBytes?: number
  /** Byte bound of the default in-memory store (ignored when `store` is given). @default 268435456 (256 MiB) */
  maxMemoryBytes?: number
}

/** Normalised token usage of one completed upstream call. */
export interface UsageEvent {
  requestId: string
  /** The owner id (a hex digest, never the key). */
  owner: string
  model: string
  endpoint: Endpoint
  input_tokens: number
  output_tokens: number
  total_tokens: number
  /** True when the client had gone and the response was kept as a recovery record. */
  recovered: boolean
}

/** Where the gateway reports problems it cannot answer to a client (failed record writes, store errors). */
export interface GatewayLogger {
  warn(message: string, meta?: Record<string, unknown>): void
  error(message: string, meta?: Record<string, unknown>): void
}

/** Options of `createGateway`. */
export interface GatewayOptions {
  /** Upstream APIs by name. */
  upstreams: Record<string, UpstreamOptions>
  /** The models offered; each names an upstream. */
  models: readonly ModelOptions[]
  /** Client authentication. */
  auth: AuthOptions
  /** A Keyv instance for recovery records. @default an in-memory store bounded by `recovery.maxMemoryBytes` */
  store?: Keyv
  /** Recovery settings. */
  recovery?: RecoveryOptions
  /** Request limits. */
  limits?: {
    /** Largest request body accepted; larger ones get 413 and are not forwarded. @default 67108864 (64 MiB) */
    maxRequestBytes?: number
  }
  /** Timeouts. */
  timeouts?: {
    /** Longest wait for an upstream's response headers, and between two body chunks. @default 600000 (10 min) */
    upstreamMs?: number
    /** Longest wait for a TCP/TLS connection to an upstream. @default 10000 */
    connectMs?: number
  }
  /** Called once per completed 2xx upstream call with normalised token counts (0 when the upstream reported none). @default undefined */
  onUsage?: (usage: UsageEvent) => void
  /** Receives warnings and errors. @default console */
  logger?: GatewayLogger
}

/** Options after defaults are applied and checked. */
export interface ResolvedOptions {
  upstreams: Map<string, ResolvedUpstream>
  models: Map<string, ResolvedModel>
  auth: AuthOptions
  store: Keyv | undefined
  recovery: Required<RecoveryOptions>
  maxRequestBytes: number
  upstreamMs: number
  connectMs: number
  onUsage: ((usage: UsageEvent) => void) | undefined
  logger: GatewayLogger
}

/** An upstream with its base URL parsed once. */
export interface ResolvedUpstream {
  name: string
  type: UpstreamType
  origin: string
  /** Path prefix of `baseUrl`, without a trailing slash. */
  basePath: string
  apiKey: string | undefined
  headers: Record<string, string>
}

/** A model with its upstream attached. */
export interface ResolvedModel {
  id: string
  upstreamModel: string
  ownedBy: string
  created: number
  upstream: ResolvedUpstream
}

const DEFAULTS = {
  recovery: { ttlMs: 3 * 24 * 3600_000, maxStoredRequestBytes: 20 * 1024 * 1024, maxMemoryBytes: 256 * 1024 * 1024 },
  maxRequestBytes: 64 * 1024 * 1024,
  upstreamMs: 10 * 60_000,
  connectMs: 10_000,
}

function fail(message: string): never {
  throw new GatewayError('invalid_options', message)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function positiveInt(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    fail(`${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

function resolveUpstream(name: string, raw: unknown): ResolvedUpstream {
  if (!isRecord(raw)) fail(`upstreams.${name} must be an object`)
  if (raw.type !== 'openai' && raw.type !== 'gemini') fail(`upstreams.${name}.type must be 'openai' or 'gemini'`)
  if (typeof raw.baseUrl !== 'string') fail(`upstreams.${name}.baseUrl must be a URL string`)
  let url: URL
  try {
    url = new URL(raw.baseUrl)
  } catch {
    fail(`upstreams.${name}.baseUrl is not a valid URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`upstreams.${name}.baseUrl must be http or https`)
  if (url.search || url.hash || url.username || url.password) {
    fail(`upstreams.${name}.baseUrl must not carry a query, fragment or credentials`)
  }
  if (raw.apiKey !== undefined && (typeof raw.apiKey !== 'string' || raw.apiKey === '')) {
    fail(`upstreams.${name}.apiKey must be a non-empty string`)
  }
  const headers: Record<string, string> = {}
  if (raw.headers !== undefined) {
    if (!isRecord(raw.headers)) fail(`upstreams.${name}.headers must be an object of strings`)
    for (const [key, value] of Object.entries(raw.headers)) {
      if (typeof value !== 'string') fail(`upstreams.${name}.headers.${key} must be a string`)
      headers[key.toLowerCase()] = value
    }
  }
  return {
    name,
    type: raw.type,
    origin: url.origin,
    // Google documents its base URL with `/v1beta`; the gateway adds the version itself, so a copied URL still works.
    basePath: url.pathname.replace(/\/+$/, '').replace(raw.type === 'gemini' ? /\/v1beta$/ : /$^/, ''),
    apiKey: raw.apiKey as string | undefined,
    headers,
  }
}

function resolveAuth(raw: unknown): AuthOptions {
  if (!isRecord(raw)) fail('auth must be { apiKeys } or { authenticate }')
  if ('authenticate' in raw) {
    if (typeof raw.authenticate !== 'function') fail('auth.authenticate must be a function')
    return { authenticate: raw.authenticate as Extract<AuthOptions, { authenticate: unknown }>['authenticate'] }
  }
  if (!Array.isArray(raw.apiKeys) || raw.apiKeys.length === 0) fail('auth.apiKeys must be a non-empty array')
  for (const key of raw.apiKeys) {
    if (typeof key !== 'string' || key.length === 0 || /\s/.test(key)) fail('auth.apiKeys must hold non-empty strings without spaces')
  }
  return { apiKeys: [...(raw.apiKeys as string[])] }
}

function isKeyvLike(value: unknown): value is Keyv {
  // Checked by shape, not instanceof: the caller may hold another copy of keyv.
  return isRecord(value) && typeof value.get === 'function' && typeof value.set === 'function' && typeof value.delete === 'function'
}

/** Applies defaults and checks every option once, at construction; throws GatewayError('invalid_options'). */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (!isRecord(options)) fail('createGateway needs an options object')
  if (!isRecord(options.upstreams) || Object.keys(options.upstreams).length === 0) fail('upstreams must name at least one upstream')
  const upstreams = new Map<string, ResolvedUpstream>()
  for (const [name, raw] of Object.entries(options.upstreams)) upstreams.set(name, resolveUpstream(name, raw))

  if (!Array.isArray(options.models) || options.models.length === 0) fail('models must list at least one model')
  const createdAt = Math.floor(Date.now() / 1000)
  const models = new Map<string, ResolvedModel>()
  options.models.forEach((raw: unknown, i: number) => {
    if (!isRecord(raw)) fail(`models[${i}] must be an object`)
    if (typeof raw.id !== 'string' || raw.id === '' || !/^[\w.\-/@]+$/.test(raw.id)) {
      fail(`models[${i}].id must be a non-empty string of letters, digits and . _ - / @`)
    }
    if (models.has(raw.id)) fail(`models[${i}].id '${raw.id}' is listed twice`)
    const upstream = typeof raw.upstream === 'string' ? upstreams.get(raw.upstream) : undefined
    if (!upstream) fail(`models[${i}].upstream must name one of: ${[...upstreams.keys()].join(', ')}`)
    const upstreamModel = raw.upstreamModel ?? raw.id
    if (typeof upstreamModel !== 'string' || upstreamModel === '') fail(`models[${i}].upstreamModel must be a non-empty string`)
    if (upstream.type === 'gemini' && !/^[\w.\-]+$/.test(upstreamModel)) {
      fail(`models[${i}].upstreamModel must be a plain Gemini model name`)
    }
    if (raw.ownedBy !== undefined && typeof raw.ownedBy !== 'string') fail(`models[${i}].ownedBy must be a string`)
    if (raw.created !== undefined && (typeof raw.created !== 'number' || !Number.isSafeInteger(raw.created) || raw.created < 0)) {
      fail(`models[${i}].created must be Unix seconds`)
    }
    models.set(raw.id, {
      id: raw.id,
      upstreamModel,
      ownedBy: (raw.ownedBy as string | undefined) ?? upstream.name,
      created: (raw.created as number | undefined) ?? createdAt,
      upstream,
    })
  })

  if (options.store !== undefined && !isKeyvLike(options.store)) fail('store must be a Keyv instance')
  const recovery = isRecord(options.recovery) || options.recovery === undefined ? options.recovery ?? {} : fail('recovery must be an object')
  const limits = isRecord(options.limits) || options.limits === undefined ? options.limits ?? {} : fail('limits must be an object')
  const timeouts = isRecord(options.timeouts) || options.timeouts === undefined ? options.timeouts ?? {} : fail('timeouts must be an object')
  if (options.onUsage !== undefined && typeof options.onUsage !== 'function') fail('onUsage must be a function')
  const logger = options.logger ?? console
  if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') fail('logger must have warn and error methods')

  return {
    upstreams,
    models,
    auth: resolveAuth(options.auth),
    store: options.store,
    recovery: {
      ttlMs: positiveInt(recovery.ttlMs, DEFAULTS.recovery.ttlMs, 'recovery.ttlMs'),
      maxStoredRequestBytes: positiveInt(recovery.maxStoredRequestBytes, DEFAULTS.recovery.maxStoredRequestBytes, 'recovery.maxStoredRequestBytes'),
      maxMemoryBytes: positiveInt(recovery.maxMemoryBytes, DEFAULTS.recovery.maxMemoryBytes, 'recovery.maxMemoryBytes'),
    },
    maxRequestBytes: positiveInt(limits.maxRequestBytes, DEFAULTS.maxRequestBytes, 'limits.maxRequestBytes'),
    upstreamMs: positiveInt(timeouts.upstreamMs, DEFAULTS.upstreamMs, 'timeouts.upstreamMs'),
    connectMs: positiveInt(timeouts.connectMs, DEFAULTS.connectMs, 'timeouts.connectMs'),
    onUsage: options.onUsage,
    logger,
  }
}
