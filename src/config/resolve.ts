import type Keyv from 'keyv'
import { type ResolvedCacheOptions, resolveCache } from '../cache/options.js'
import { type ResolvedConsole, resolveConsole } from '../console/options.js'
import { isObject } from '../json/value.js'
import { type ResolvedOwnerLimits, resolveOwnerLimits } from '../ledger/limits.js'
import { type NanoPrices, resolvePricing } from '../ledger/pricing.js'
import type {
  AuthOptions,
  BackgroundOptions,
  GatewayLogger,
  GatewayOptions,
  IdempotencyOptions,
  KeepAliveOptions,
  LimitOptions,
  RecoveryOptions,
  TimeoutOptions,
  UsageEvent,
} from '../types.js'
import { type EgressOptions, resolveEgress, withInterceptors } from '../upstream/agent.js'
import { fail, knownKeys } from './checks.js'
import { type ResolvedCors, resolveCors } from './cors.js'
import { DEFAULTS, KNOWN_KEYS } from './defaults.js'
import { type ResolvedUpstream, resolveUpstream, upstreamForModel } from './upstream.js'

/** Options after defaults are applied and checked. */
export interface ResolvedOptions {
  upstreams: Map<string, ResolvedUpstream>
  models: Map<string, ResolvedModel>
  /** The models by their `aliases`: a call's model is one of `models`, else one of these. */
  aliases: Map<string, ResolvedModel>
  auth: AuthOptions
  store: Keyv | undefined
  recovery: Required<RecoveryOptions>
  idempotency: Required<IdempotencyOptions>
  background: Required<BackgroundOptions>
  limits: Required<Omit<LimitOptions, 'owners' | 'failClosed'>>
  /** `pricing` by model id; undefined without it. */
  pricing: Map<string, NanoPrices> | undefined
  /** Ids `pricing` prices that no model has: taken, and named in one warn line at construction. */
  unofferedPrices: string[]
  /** `limits.owners` and `limits.failClosed`, and whether any model has a price; undefined without owner limits. */
  ownerLimits: { owners: ResolvedOwnerLimits; failClosed: boolean; priced: boolean } | undefined
  timeouts: Required<TimeoutOptions>
  /** `streamMs` 0 when keep-alive is off. */
  keepAlive: Required<KeepAliveOptions>
  /** Undefined when CORS is off (the default). */
  cors: ResolvedCors | undefined
  /** `translation.strict`, false unless set. */
  translation: { strict: boolean }
  /** `cache`; undefined when the cache is off (the default). */
  cache: ResolvedCacheOptions | undefined
  /** `interceptors`, `dispatcher` and `proxy`: how upstream calls leave the process. */
  egress: EgressOptions
  /** Undefined when the console is off (the default). */
  console: ResolvedConsole | undefined
  onUsage: ((usage: UsageEvent) => void) | undefined
  logger: GatewayLogger
}

/** A model with its upstream attached. */
export interface ResolvedModel {
  id: string
  upstreamModel: string
  ownedBy: string
  created: number
  upstream: ResolvedUpstream
  /** Models tried in order when this one's upstream fails before it can have billed (of either format). */
  fallbacks: readonly ResolvedModel[]
  /** The output token limit a translated request that sets none is sent with, where the upstream requires one; undefined: the format's own default. */
  maxOutputTokens: number | undefined
  /** The context window in tokens, as configured; undefined: not known. */
  contextWindow: number | undefined
  /** The release time configured (`created`), Unix seconds; undefined: not known. */
  released: number | undefined
}

export type { ResolvedUpstream, UpstreamKey } from './upstream.js'

function positiveInt(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    fail(`${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

/** The longest delay a Node timer takes; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

/** Whole ms, 0 up to the longest timer. */
function wholeMs(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    fail(`${name} must be a whole number of ms from 0 to ${MAX_TIMER_MS}, got ${String(value)}`)
  }
  return value
}

/** `keepAlive.streamMs`: whole ms, 0 (off) up to the longest timer. */
function keepAliveMs(value: unknown): number {
  if (value === undefined) return DEFAULTS.keepAlive.streamMs
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    fail(`keepAlive.streamMs must be a whole number of ms from 0 (off) to ${MAX_TIMER_MS}, got ${String(value)}`)
  }
  return value
}

/** `models[i].fallbacks`: configured models of either format, other than the model itself, each once. */
function resolveFallbacks(models: Map<string, ResolvedModel>, raw: Record<string, unknown>, i: number): void {
  if (raw.fallbacks === undefined) return
  const model = models.get(raw.id as string) as ResolvedModel
  if (!Array.isArray(raw.fallbacks)) fail(`models[${i}].fallbacks must be an array of model ids`)
  const fallbacks: ResolvedModel[] = []
  for (const id of raw.fallbacks as unknown[]) {
    const fallback = typeof id === 'string' ? models.get(id) : undefined
    if (!fallback) fail(`models[${i}].fallbacks: '${String(id)}' is not a configured model id`)
    if (fallback === model || fallbacks.includes(fallback)) fail(`models[${i}].fallbacks: '${id}' is the model itself or listed twice`)
    fallbacks.push(fallback)
  }
  model.fallbacks = fallbacks
}

/** `models[i].aliases`: names a call may use besides the ids, each naming one model. */
function resolveAliases(models: Map<string, ResolvedModel>, raws: readonly unknown[]): Map<string, ResolvedModel> {
  const aliases = new Map<string, ResolvedModel>()
  raws.forEach((raw, i) => {
    const list = (raw as Record<string, unknown>).aliases
    if (list === undefined) return
    if (!Array.isArray(list)) fail(`models[${i}].aliases must be an array of model names`)
    const model = models.get((raw as { id: string }).id) as ResolvedModel
    for (const alias of list as unknown[]) {
      if (typeof alias !== 'string' || alias === '' || alias.length > 256 || !/^[\w.\-/@:]+$/.test(alias)) {
        fail(`models[${i}].aliases must hold non-empty names of letters, digits and . _ - / @ :`)
      }
      if (models.has(alias) || aliases.has(alias)) fail(`models[${i}].aliases: '${alias}' is already a model id or alias`)
      aliases.set(alias, model)
    }
  })
  return aliases
}

function resolveAuth(raw: unknown): AuthOptions {
  if (!isObject(raw)) fail('auth must be { apiKeys } or { authenticate }')
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
  if (!isObject(value)) fail(`${name} must be an object`)
  knownKeys(value, known, `${name}.`)
  return value
}

function isKeyvLike(value: unknown): value is Keyv {
  // Checked by shape, not instanceof: the caller may hold another copy of keyv.
  return isObject(value) && typeof value.get === 'function' && typeof value.set === 'function' && typeof value.delete === 'function'
}

/** The default logger: the console, but for its debug lines, which only an operator who asks for them wants. */
const CONSOLE: GatewayLogger = {
  info: (...line) => console.info(...line),
  warn: (...line) => console.warn(...line),
  error: (...line) => console.error(...line),
}

/** Applies defaults and checks every option once, at construction; throws GatewayError('invalid_options'). */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (!isObject(options)) fail('createGateway needs an options object')
  knownKeys(options, KNOWN_KEYS.top, '')
  if (!isObject(options.upstreams) || Object.keys(options.upstreams).length === 0) fail('upstreams must name at least one upstream')
  const upstreams = new Map<string, ResolvedUpstream>()
  for (const [name, raw] of Object.entries(options.upstreams)) upstreams.set(name, resolveUpstream(name, raw))
  const egress = resolveEgress(options)
  // An upstream's own dispatcher sits behind the gateway's interceptors too (before any model's variant copies it).
  for (const upstream of upstreams.values()) {
    if (upstream.dispatcher !== undefined) upstream.dispatcher = withInterceptors(upstream.dispatcher, egress.interceptors)
  }

  if (!Array.isArray(options.models) || options.models.length === 0) fail('models must list at least one model')
  const createdAt = Math.floor(Date.now() / 1000)
  const models = new Map<string, ResolvedModel>()
  const variants = new Map<string, ResolvedUpstream>()
  options.models.forEach((raw: unknown, i: number) => {
    if (!isObject(raw)) fail(`models[${i}] must be an object`)
    knownKeys(raw, KNOWN_KEYS.model, `models[${i}].`)
    if (typeof raw.id !== 'string' || raw.id === '' || !/^[\w.\-/@]+$/.test(raw.id)) {
      fail(`models[${i}].id must be a non-empty string of letters, digits and . _ - / @`)
    }
    if (models.has(raw.id)) fail(`models[${i}].id '${raw.id}' is listed twice`)
    const configured = typeof raw.upstream === 'string' ? upstreams.get(raw.upstream) : undefined
    if (!configured) fail(`models[${i}].upstream must name one of: ${[...upstreams.keys()].join(', ')}`)
    const upstreamModel = raw.upstreamModel ?? raw.id
    if (typeof upstreamModel !== 'string' || upstreamModel === '') fail(`models[${i}].upstreamModel must be a non-empty string`)
    const upstream = upstreamForModel(configured, upstreamModel, variants)
    const problem = upstream.dialect.upstreamModelProblem(upstreamModel)
    if (problem) fail(`models[${i}].upstreamModel ${problem}`)
    if (raw.ownedBy !== undefined && typeof raw.ownedBy !== 'string') fail(`models[${i}].ownedBy must be a string`)
    if (raw.created !== undefined && (typeof raw.created !== 'number' || !Number.isSafeInteger(raw.created) || raw.created < 0)) {
      fail(`models[${i}].created must be Unix seconds`)
    }
    const maxOutputTokens =
      raw.maxOutputTokens === undefined ? undefined : positiveInt(raw.maxOutputTokens, 0, `models[${i}].maxOutputTokens`)
    const contextWindow = raw.contextWindow === undefined ? undefined : positiveInt(raw.contextWindow, 0, `models[${i}].contextWindow`)
    models.set(raw.id, {
      id: raw.id,
      upstreamModel,
      ownedBy: (raw.ownedBy as string | undefined) ?? upstream.name,
      created: (raw.created as number | undefined) ?? createdAt,
      upstream,
      fallbacks: [],
      maxOutputTokens,
      contextWindow,
      released: raw.created as number | undefined,
    })
  })
  for (const [i, raw] of options.models.entries()) resolveFallbacks(models, raw as unknown as Record<string, unknown>, i)
  const aliases = resolveAliases(models, options.models)

  if (options.store !== undefined && !isKeyvLike(options.store)) fail('store must be a Keyv instance')
  const recovery = section(options.recovery, 'recovery', KNOWN_KEYS.recovery)
  const idempotency = section(options.idempotency, 'idempotency', KNOWN_KEYS.idempotency)
  if (recovery.streams !== undefined && recovery.streams !== 'cancel' && recovery.streams !== 'finish') {
    fail("recovery.streams must be 'cancel' or 'finish'")
  }
  if (idempotency.sdkRetries !== undefined && typeof idempotency.sdkRetries !== 'boolean') fail('idempotency.sdkRetries must be a boolean')
  if (idempotency.failOpen !== undefined && typeof idempotency.failOpen !== 'boolean') fail('idempotency.failOpen must be a boolean')
  const limits = section(options.limits, 'limits', KNOWN_KEYS.limits)
  const background = section(options.background, 'background', KNOWN_KEYS.background)
  const timeouts = section(options.timeouts, 'timeouts', KNOWN_KEYS.timeouts)
  const keepAlive = section(options.keepAlive, 'keepAlive', KNOWN_KEYS.keepAlive)
  const pricing = resolvePricing(options.pricing, new Set(models.keys()))
  // Prices only of models the gateway does not offer price nothing: a cost limit could never be reached.
  const priced = pricing !== undefined && pricing.prices.size > 0
  const owners = resolveOwnerLimits(limits.owners, priced)
  if (limits.failClosed !== undefined && typeof limits.failClosed !== 'boolean') fail('limits.failClosed must be a boolean')
  const translation = section(options.translation, 'translation', KNOWN_KEYS.translation)
  if (translation.strict !== undefined && typeof translation.strict !== 'boolean') fail('translation.strict must be a boolean')
  const cors = resolveCors(options.cors === undefined ? undefined : section(options.cors, 'cors', KNOWN_KEYS.cors))
  if (options.onUsage !== undefined && typeof options.onUsage !== 'function') fail('onUsage must be a function')
  const logger = options.logger ?? CONSOLE
  if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') fail('logger must have warn and error methods')

  return {
    upstreams,
    models,
    aliases,
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
      maxHeldStreamBytes: positiveInt(recovery.maxHeldStreamBytes, DEFAULTS.recovery.maxHeldStreamBytes, 'recovery.maxHeldStreamBytes'),
      streams: (recovery.streams as 'cancel' | 'finish' | undefined) ?? 'cancel',
      maxPendingRecords: positiveInt(recovery.maxPendingRecords, DEFAULTS.recovery.maxPendingRecords, 'recovery.maxPendingRecords'),
      maxPendingBytes: positiveInt(recovery.maxPendingBytes, DEFAULTS.recovery.maxPendingBytes, 'recovery.maxPendingBytes'),
    },
    idempotency: {
      sdkRetries: (idempotency.sdkRetries as boolean | undefined) ?? true,
      retryWindowMs: positiveInt(idempotency.retryWindowMs, DEFAULTS.idempotency.retryWindowMs, 'idempotency.retryWindowMs'),
      ttlMs: positiveInt(idempotency.ttlMs, DEFAULTS.idempotency.ttlMs, 'idempotency.ttlMs'),
      recentMs: positiveInt(idempotency.recentMs, DEFAULTS.idempotency.recentMs, 'idempotency.recentMs'),
      recentMaxBytes: positiveInt(idempotency.recentMaxBytes, DEFAULTS.idempotency.recentMaxBytes, 'idempotency.recentMaxBytes'),
      waitMs: positiveInt(idempotency.waitMs, DEFAULTS.idempotency.waitMs, 'idempotency.waitMs'),
      storeWaitMs: wholeMs(idempotency.storeWaitMs, DEFAULTS.idempotency.storeWaitMs, 'idempotency.storeWaitMs'),
      failOpen: (idempotency.failOpen as boolean | undefined) ?? false,
    },
    background: {
      maxEvents: positiveInt(background.maxEvents, DEFAULTS.background.maxEvents, 'background.maxEvents'),
      maxBytes: positiveInt(background.maxBytes, DEFAULTS.background.maxBytes, 'background.maxBytes'),
      leaseMs: positiveInt(background.leaseMs, DEFAULTS.background.leaseMs, 'background.leaseMs'),
      maxRunningPerOwner: positiveInt(
        background.maxRunningPerOwner,
        DEFAULTS.background.maxRunningPerOwner,
        'background.maxRunningPerOwner',
      ),
      maxRunning: positiveInt(background.maxRunning, DEFAULTS.background.maxRunning, 'background.maxRunning'),
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
      maxDecodingBytes: positiveInt(limits.maxDecodingBytes, DEFAULTS.limits.maxDecodingBytes, 'limits.maxDecodingBytes'),
    },
    pricing: pricing?.prices,
    unofferedPrices: pricing?.unoffered ?? [],
    ownerLimits: owners && { owners, failClosed: limits.failClosed === true, priced },
    timeouts: {
      upstreamMs: positiveInt(timeouts.upstreamMs, DEFAULTS.timeouts.upstreamMs, 'timeouts.upstreamMs'),
      connectMs: positiveInt(timeouts.connectMs, DEFAULTS.timeouts.connectMs, 'timeouts.connectMs'),
      requestBodyMs: positiveInt(timeouts.requestBodyMs, DEFAULTS.timeouts.requestBodyMs, 'timeouts.requestBodyMs'),
      clientWriteMs: positiveInt(timeouts.clientWriteMs, DEFAULTS.timeouts.clientWriteMs, 'timeouts.clientWriteMs'),
      lateResetMs: positiveInt(timeouts.lateResetMs, DEFAULTS.timeouts.lateResetMs, 'timeouts.lateResetMs'),
    },
    keepAlive: { streamMs: keepAliveMs(keepAlive.streamMs) },
    cors,
    translation: { strict: translation.strict === true },
    cache: resolveCache(options.cache, new Set(models.keys())),
    egress,
    console: resolveConsole(options.console),
    onUsage: options.onUsage,
    logger,
  }
}
