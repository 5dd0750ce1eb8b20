import type Keyv from 'keyv'
import { DIALECT_NAMES, type Dialect, dialectNamed } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import type {
  AuthOptions,
  GatewayLogger,
  GatewayOptions,
  IdempotencyOptions,
  LimitOptions,
  RecoveryOptions,
  TimeoutOptions,
  UsageEvent,
} from '../types.js'
import { type ResolvedCors, resolveCors } from './cors.js'
import { DEFAULTS, KNOWN_KEYS } from './defaults.js'
import { nearestName } from './suggest.js'

/** Options after defaults are applied and checked. */
export interface ResolvedOptions {
  upstreams: Map<string, ResolvedUpstream>
  models: Map<string, ResolvedModel>
  auth: AuthOptions
  store: Keyv | undefined
  recovery: Required<RecoveryOptions>
  idempotency: Required<IdempotencyOptions>
  limits: Required<LimitOptions>
  timeouts: Required<TimeoutOptions>
  /** Undefined when CORS is off (the default). */
  cors: ResolvedCors | undefined
  onUsage: ((usage: UsageEvent) => void) | undefined
  logger: GatewayLogger
}

/** An upstream with its base URL parsed once. */
export interface ResolvedUpstream {
  name: string
  dialect: Dialect
  origin: string
  /** Path prefix of `baseUrl`, without a trailing slash. */
  basePath: string
  apiKey: string | undefined
  /** The secrets this upstream is sent (its key, and credentials in configured auth headers): never shown to anyone. */
  secrets: readonly string[]
  /**
   * What every call to it carries, as undici's flat `[name, value, …]` list (cheaper per call than an object):
   * configured headers, content type, `accept-encoding: identity` and the upstream key's headers.
   */
  requestHeaders: readonly string[]
}

/** A model with its upstream attached. */
export interface ResolvedModel {
  id: string
  upstreamModel: string
  ownedBy: string
  created: number
  upstream: ResolvedUpstream
}

function fail(message: string): never {
  throw new GatewayError('invalid_options', message)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Rejects keys an options object does not know, naming the nearest valid one. */
function knownKeys(value: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const near = nearestName(key, known)
    fail(`${where}${key} is not an option${near ? `; did you mean \`${near}\`?` : ''} (known: ${known.join(', ')})`)
  }
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
  knownKeys(raw, KNOWN_KEYS.upstream, `upstreams.${name}.`)
  const dialect = dialectNamed(raw.type)
  if (!dialect) fail(`upstreams.${name}.type must be one of: ${DIALECT_NAMES.map((n) => `'${n}'`).join(', ')}`)
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
    dialect,
    origin: url.origin,
    basePath: dialect.upstreamBasePath(url.pathname),
    apiKey: raw.apiKey as string | undefined,
    secrets: secretsOf(raw.apiKey as string | undefined, headers),
    requestHeaders: flatHeaders({
      ...headers,
      'content-type': 'application/json',
      // Never compressed: the gateway reads usage from answers and keeps them byte for byte.
      'accept-encoding': 'identity',
      ...(typeof raw.apiKey === 'string' ? dialect.upstreamAuthHeaders(raw.apiKey) : {}),
    }),
  }
}

/** Header names that carry credentials when an operator configures them by hand. */
const CREDENTIAL_HEADER = /auth|key|token|secret/i

/** The key and any credential-looking configured header values (a Bearer token without its scheme). */
function secretsOf(apiKey: string | undefined, headers: Record<string, string>): string[] {
  const secrets = apiKey === undefined ? [] : [apiKey]
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) continue
    const token = value.replace(/^\s*(Bearer|Basic)\s+/i, '').trim()
    // Short values are not secrets worth scrubbing from bodies, and replacing them would garble ordinary text.
    if (token.length >= 8) secrets.push(token)
  }
  return secrets
}

/** Per-call headers (`content-length`, `accept`) are set by each call; configured ones of those names are dropped. */
function flatHeaders(headers: Record<string, string>): string[] {
  const flat: string[] = []
  for (const [name, value] of Object.entries(headers)) if (name !== 'content-length' && name !== 'accept') flat.push(name, value)
  return flat
}

function resolveAuth(raw: unknown): AuthOptions {
  if (!isRecord(raw)) fail('auth must be { apiKeys } or { authenticate }')
  knownKeys(raw, KNOWN_KEYS.auth, 'auth.')
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

/** An optional nested options object, checked for unknown keys. */
function section(value: unknown, name: string, known: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {}
  if (!isRecord(value)) fail(`${name} must be an object`)
  knownKeys(value, known, `${name}.`)
  return value
}

function isKeyvLike(value: unknown): value is Keyv {
  // Checked by shape, not instanceof: the caller may hold another copy of keyv.
  return isRecord(value) && typeof value.get === 'function' && typeof value.set === 'function' && typeof value.delete === 'function'
}

/** Applies defaults and checks every option once, at construction; throws GatewayError('invalid_options'). */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (!isRecord(options)) fail('createGateway needs an options object')
  knownKeys(options, KNOWN_KEYS.top, '')
  if (!isRecord(options.upstreams) || Object.keys(options.upstreams).length === 0) fail('upstreams must name at least one upstream')
  const upstreams = new Map<string, ResolvedUpstream>()
  for (const [name, raw] of Object.entries(options.upstreams)) upstreams.set(name, resolveUpstream(name, raw))

  if (!Array.isArray(options.models) || options.models.length === 0) fail('models must list at least one model')
  const createdAt = Math.floor(Date.now() / 1000)
  const models = new Map<string, ResolvedModel>()
  options.models.forEach((raw: unknown, i: number) => {
    if (!isRecord(raw)) fail(`models[${i}] must be an object`)
    knownKeys(raw, KNOWN_KEYS.model, `models[${i}].`)
    if (typeof raw.id !== 'string' || raw.id === '' || !/^[\w.\-/@]+$/.test(raw.id)) {
      fail(`models[${i}].id must be a non-empty string of letters, digits and . _ - / @`)
    }
    if (models.has(raw.id)) fail(`models[${i}].id '${raw.id}' is listed twice`)
    const upstream = typeof raw.upstream === 'string' ? upstreams.get(raw.upstream) : undefined
    if (!upstream) fail(`models[${i}].upstream must name one of: ${[...upstreams.keys()].join(', ')}`)
    const upstreamModel = raw.upstreamModel ?? raw.id
    if (typeof upstreamModel !== 'string' || upstreamModel === '') fail(`models[${i}].upstreamModel must be a non-empty string`)
    const problem = upstream.dialect.upstreamModelProblem(upstreamModel)
    if (problem) fail(`models[${i}].upstreamModel ${problem}`)
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
  const recovery = section(options.recovery, 'recovery', KNOWN_KEYS.recovery)
  const idempotency = section(options.idempotency, 'idempotency', KNOWN_KEYS.idempotency)
  if (idempotency.sdkRetries !== undefined && typeof idempotency.sdkRetries !== 'boolean') fail('idempotency.sdkRetries must be a boolean')
  const limits = section(options.limits, 'limits', KNOWN_KEYS.limits)
  const timeouts = section(options.timeouts, 'timeouts', KNOWN_KEYS.timeouts)
  const cors = resolveCors(options.cors === undefined ? undefined : section(options.cors, 'cors', KNOWN_KEYS.cors))
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
      maxStoredRequestBytes: positiveInt(
        recovery.maxStoredRequestBytes,
        DEFAULTS.recovery.maxStoredRequestBytes,
        'recovery.maxStoredRequestBytes',
      ),
      maxMemoryBytes: positiveInt(recovery.maxMemoryBytes, DEFAULTS.recovery.maxMemoryBytes, 'recovery.maxMemoryBytes'),
      maxRecordsPerOwner: positiveInt(recovery.maxRecordsPerOwner, DEFAULTS.recovery.maxRecordsPerOwner, 'recovery.maxRecordsPerOwner'),
      maxBytesPerOwner: positiveInt(recovery.maxBytesPerOwner, DEFAULTS.recovery.maxBytesPerOwner, 'recovery.maxBytesPerOwner'),
    },
    idempotency: {
      sdkRetries: (idempotency.sdkRetries as boolean | undefined) ?? true,
      retryWindowMs: positiveInt(idempotency.retryWindowMs, DEFAULTS.idempotency.retryWindowMs, 'idempotency.retryWindowMs'),
      ttlMs: positiveInt(idempotency.ttlMs, DEFAULTS.idempotency.ttlMs, 'idempotency.ttlMs'),
      recentMs: positiveInt(idempotency.recentMs, DEFAULTS.idempotency.recentMs, 'idempotency.recentMs'),
      recentMaxBytes: positiveInt(idempotency.recentMaxBytes, DEFAULTS.idempotency.recentMaxBytes, 'idempotency.recentMaxBytes'),
      waitMs: positiveInt(idempotency.waitMs, DEFAULTS.idempotency.waitMs, 'idempotency.waitMs'),
    },
    limits: {
      maxRequestBytes: positiveInt(limits.maxRequestBytes, DEFAULTS.limits.maxRequestBytes, 'limits.maxRequestBytes'),
      maxResponseBytes: positiveInt(limits.maxResponseBytes, DEFAULTS.limits.maxResponseBytes, 'limits.maxResponseBytes'),
      maxJsonDepth: positiveInt(limits.maxJsonDepth, DEFAULTS.limits.maxJsonDepth, 'limits.maxJsonDepth'),
      maxInFlightRequestBytes: positiveInt(
        limits.maxInFlightRequestBytes,
        DEFAULTS.limits.maxInFlightRequestBytes,
        'limits.maxInFlightRequestBytes',
      ),
      maxInFlightRequestBytesPerOwner: positiveInt(
        limits.maxInFlightRequestBytesPerOwner,
        DEFAULTS.limits.maxInFlightRequestBytesPerOwner,
        'limits.maxInFlightRequestBytesPerOwner',
      ),
    },
    timeouts: {
      upstreamMs: positiveInt(timeouts.upstreamMs, DEFAULTS.timeouts.upstreamMs, 'timeouts.upstreamMs'),
      connectMs: positiveInt(timeouts.connectMs, DEFAULTS.timeouts.connectMs, 'timeouts.connectMs'),
      requestBodyMs: positiveInt(timeouts.requestBodyMs, DEFAULTS.timeouts.requestBodyMs, 'timeouts.requestBodyMs'),
    },
    cors,
    onUsage: options.onUsage,
    logger,
  }
}
