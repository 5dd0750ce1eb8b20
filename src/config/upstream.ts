import type { Dispatcher } from 'undici'
import {
  DIALECT_NAMES,
  DIALECT_UPSTREAM_OPTIONS,
  type Dialect,
  dialectNamed,
  type UpstreamApi,
  type UpstreamOptionValues,
  upstreamApi,
} from '../dialects/index.js'
import { withoutAuthScheme } from '../dialects/shared.js'
import { isObject } from '../json/value.js'
import type { KeySelection } from '../types.js'
import { isDispatcher } from '../upstream/agent.js'
import type { UpstreamAuthorizer } from '../upstream/authorize.js'
import { baseUrlOf, fail, knownKeys } from './checks.js'
import { DEFAULTS, KNOWN_KEYS } from './defaults.js'

/** One key of an upstream's pool: what it is called in logs and usage, how much traffic it takes, what it sends. */
export interface UpstreamKey {
  /** A name for logs, usage events and status: the configured `alias`, else `key-<n>` (never the key). */
  alias: string
  /** Relative share of calls. */
  weight: number
  /** The key's auth headers, as undici's flat `[name, value, …]` list. */
  headers: readonly string[]
}

/** The key selections, the default first. */
const KEY_SELECTIONS: readonly KeySelection[] = ['round-robin', 'least-in-flight']

/** An upstream with its base URL parsed once. */
export interface ResolvedUpstream {
  name: string
  dialect: Dialect
  origin: string
  /** Path prefix of `baseUrl`, without a trailing slash. */
  basePath: string
  /** "did you mean '…/v1'?" when `baseUrl`'s path is likely wrong though it may be right; undefined otherwise. */
  baseUrlHint: string | undefined
  /** The secrets this upstream is sent (its keys, and credentials in configured auth headers): never shown to anyone. */
  secrets: readonly string[]
  /**
   * What every call to it carries, as undici's flat `[name, value, …]` list (cheaper per call than an object):
   * configured headers, content type and `accept-encoding: identity`. The key's headers come per call.
   */
  requestHeaders: readonly string[]
  /** The keys calls are spread over; empty for a keyless upstream. */
  keys: readonly UpstreamKey[]
  /**
   * The headers of its dialect a call carries besides the key (Anthropic's `anthropic-version`): `forwarded` names
   * the client headers a call of the same dialect passes on as they came, `own` holds the configured options' values
   * (a flat `[name, value, …]` list), sent where the client sent none and on every translated call. A header set in
   * `headers` is in neither: it goes as configured, so no call carries it twice.
   */
  dialectHeaders: { forwarded: readonly string[]; own: readonly string[] }
  /** The format and operation calls translated from another dialect take to it (OpenAI's chat or Responses, by `api`). */
  api: UpstreamApi
  /** How the next call's key is picked when there are several. */
  keySelection: KeySelection
  /** When its circuit opens (failed calls in a row) and how long it then rests before a probe. */
  circuit: { failures: number; cooldownMs: number }
  /** Adds its credentials to each request as it is sent (signs it, or adds a fresh token); undefined: key headers only. */
  authorizer: UpstreamAuthorizer | undefined
  /** The values of its dialect's options (`upstreamOptions`), each the configured one or its default. */
  dialectOptions: UpstreamOptionValues
  /** Its own `dispatcher` (behind the gateway's interceptors once resolved); undefined: the gateway's. */
  dispatcher: Dispatcher | undefined
}

/** The upstream as one of its models reaches it: itself, or its variant in the dialect that model speaks (`forModel`). */
export function upstreamForModel(
  upstream: ResolvedUpstream,
  upstreamModel: string,
  variants: Map<string, ResolvedUpstream>,
): ResolvedUpstream {
  const dialect = upstream.dialect.forModel?.(upstreamModel)
  if (dialect === undefined || dialect === upstream.dialect) return upstream
  const key = `${upstream.name}\u0000${dialect.name}`
  let variant = variants.get(key)
  if (variant === undefined) {
    variant = { ...upstream, dialect, api: upstreamApi(dialect, upstream.dialectOptions) }
    variants.set(key, variant)
  }
  return variant
}

/** Hosts a keyless upstream is expected on (a local model server); anywhere else a missing key is a mistake. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/

/** The configured keys: `apiKey`, or `apiKeys` (strings or `{ key, weight?, alias? }`). */
function keysOf(name: string, raw: Record<string, unknown>, dialect: Dialect): Array<UpstreamKey & { secret: string }> {
  if (raw.apiKey !== undefined && raw.apiKeys !== undefined) fail(`upstreams.${name} takes apiKey or apiKeys, not both`)
  if (raw.apiKey !== undefined) {
    if (typeof raw.apiKey !== 'string' || raw.apiKey === '') fail(`upstreams.${name}.apiKey must be a non-empty string`)
    return [{ alias: 'key-1', weight: 1, headers: flatHeaders(dialect.upstreamAuthHeaders(raw.apiKey)), secret: raw.apiKey }]
  }
  if (raw.apiKeys === undefined) return []
  if (!Array.isArray(raw.apiKeys) || raw.apiKeys.length === 0) fail(`upstreams.${name}.apiKeys must be a non-empty array`)
  const aliases = new Set<string>()
  return raw.apiKeys.map((entry: unknown, i: number) => {
    const where = `upstreams.${name}.apiKeys[${i}]`
    const item = typeof entry === 'string' ? { key: entry } : entry
    if (!isObject(item)) fail(`${where} must be a key string or { key, weight?, alias? }`)
    knownKeys(item, ['key', 'weight', 'alias'], `${where}.`)
    if (typeof item.key !== 'string' || item.key === '') fail(`${where}.key must be a non-empty string`)
    const weight = item.weight ?? 1
    if (typeof weight !== 'number' || !Number.isSafeInteger(weight) || weight < 1) fail(`${where}.weight must be a positive integer`)
    const alias = item.alias ?? `key-${i + 1}`
    if (typeof alias !== 'string' || !/^[\w.-]{1,64}$/.test(alias)) fail(`${where}.alias must be 1-64 letters, digits, . _ -`)
    if (aliases.has(alias)) fail(`${where}.alias '${alias}' is used twice`)
    aliases.add(alias)
    return { alias, weight, headers: flatHeaders(dialect.upstreamAuthHeaders(item.key)), secret: item.key }
  })
}

/** The hint for a `baseUrl` whose path is likely not the one meant, or undefined. */
function doubtfulHint(dialect: Dialect, url: URL): string | undefined {
  const meant = dialect.doubtfulBasePath?.(url.pathname)
  return meant === undefined ? undefined : `did you mean '${url.origin}${meant}'?`
}

/** Checks one `upstreams` entry and prepares what every call to it needs. */
export function resolveUpstream(name: string, raw: unknown): ResolvedUpstream {
  if (!isObject(raw)) fail(`upstreams.${name} must be an object`)
  const dialect = dialectNamed(raw.type)
  if (!dialect) fail(`upstreams.${name}.type must be one of: ${DIALECT_NAMES.map((n) => `'${n}'`).join(', ')}`)
  knownKeys(raw, [...KNOWN_KEYS.upstream, ...(dialect.upstreamOptionNames ?? [])], `upstreams.${name}.`)
  const baseUrl =
    (raw.baseUrl === undefined || dialect.completesBaseUrl) && dialect.baseUrlFrom ? dialect.baseUrlFrom(name, raw) : raw.baseUrl
  const url = baseUrlOf(name, baseUrl)
  const meant = dialect.intendedBasePath(url.pathname)
  if (meant !== undefined) {
    fail(
      `upstreams.${name}.baseUrl ends in the path of a call ('${url.pathname}'), which the gateway adds itself; ` +
        `did you mean '${url.origin}${meant}'?`,
    )
  }
  const headers: Record<string, string> = {}
  if (raw.headers !== undefined) {
    if (!isObject(raw.headers)) fail(`upstreams.${name}.headers must be an object of strings`)
    for (const [key, value] of Object.entries(raw.headers)) {
      if (typeof value !== 'string') fail(`upstreams.${name}.headers.${key} must be a string`)
      headers[key.toLowerCase()] = value
    }
  }
  if (raw.keyless !== undefined && typeof raw.keyless !== 'boolean') fail(`upstreams.${name}.keyless must be a boolean`)
  const keys = keysOf(name, raw, dialect)
  const keySelection = raw.keySelection ?? KEY_SELECTIONS[0]
  if (!KEY_SELECTIONS.includes(keySelection as KeySelection)) {
    fail(`upstreams.${name}.keySelection must be one of: ${KEY_SELECTIONS.map((s) => `'${s}'`).join(', ')}`)
  }
  const circuit = resolveCircuit(name, raw.circuit)
  if (raw.dispatcher !== undefined && !isDispatcher(raw.dispatcher)) fail(`upstreams.${name}.dispatcher must be an undici Dispatcher`)
  const { dialectHeaders, options } = resolveDialectOptions(name, raw, dialect, headers)
  const authorizer = dialect.upstreamAuthorizer?.(name, raw)
  const authHeader = authorizer !== undefined || Object.keys(headers).some((header) => CREDENTIAL_HEADER.test(header))
  // A missing key would reach the client as the upstream's "invalid API key", indistinguishable from its own.
  if (keys.length === 0 && !authHeader && raw.keyless !== true && !LOOPBACK.test(url.hostname)) {
    fail(`upstreams.${name} needs apiKey or apiKeys (or keyless: true for an upstream that takes no key)`)
  }
  return {
    name,
    dialect,
    origin: url.origin,
    basePath: dialect.upstreamBasePath(url.pathname),
    baseUrlHint: doubtfulHint(dialect, url),
    secrets: [...keys.map((key) => key.secret), ...secretsOf(headers)],
    requestHeaders: flatHeaders({
      ...headers,
      'content-type': 'application/json',
      // Never compressed: the gateway reads usage from answers and keeps them byte for byte.
      'accept-encoding': 'identity',
    }),
    keys: keys.map(({ alias, weight, headers: keyHeaders }) => ({ alias, weight, headers: keyHeaders })),
    keySelection: keySelection as KeySelection,
    circuit,
    dialectHeaders,
    api: upstreamApi(dialect, options),
    authorizer,
    dialectOptions: options,
    dispatcher: raw.dispatcher,
  }
}

/**
 * The options of the upstream's own dialect (refused for an upstream of another: they would mean nothing to it):
 * their values, and the dialect headers its calls carry.
 */
function resolveDialectOptions(
  name: string,
  raw: Record<string, unknown>,
  dialect: Dialect,
  configured: Record<string, string>,
): { dialectHeaders: ResolvedUpstream['dialectHeaders']; options: UpstreamOptionValues } {
  for (const [option, dialects] of DIALECT_UPSTREAM_OPTIONS) {
    if (raw[option] !== undefined && !dialects.includes(dialect)) {
      fail(`upstreams.${name}.${option} is an option of ${dialects.map((d) => `type '${d.name}'`).join(' or ')} upstreams only`)
    }
  }
  const own: string[] = []
  const options: Record<string, string> = {}
  for (const [option, { header, default: fallback, problem }] of Object.entries(dialect.upstreamOptions ?? {})) {
    const value = raw[option]
    if (value !== undefined) {
      const why = problem(value)
      if (why !== undefined) fail(`upstreams.${name}.${option} ${why}`)
      if (header !== undefined && configured[header] !== undefined)
        fail(`upstreams.${name} sets ${header} twice: as ${option} and in headers`)
    }
    options[option] = value === undefined ? fallback : String(value)
    if (header !== undefined && configured[header] === undefined) own.push(header, options[option])
  }
  const forwarded = (dialect.forwardedHeaders ?? []).filter((header) => configured[header] === undefined)
  return { dialectHeaders: { forwarded, own }, options }
}

/** `circuit: { failures, cooldownMs }`, each a positive integer. */
function resolveCircuit(name: string, raw: unknown): ResolvedUpstream['circuit'] {
  const defaults = DEFAULTS.circuit
  if (raw === undefined) return { ...defaults }
  if (!isObject(raw)) fail(`upstreams.${name}.circuit must be { failures?, cooldownMs? }`)
  knownKeys(raw, Object.keys(defaults), `upstreams.${name}.circuit.`)
  const out: { failures: number; cooldownMs: number } = { ...defaults }
  for (const key of ['failures', 'cooldownMs'] as const) {
    const value = raw[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
      fail(`upstreams.${name}.circuit.${key} must be a positive integer`)
    out[key] = value
  }
  return out
}

/** Header names that carry credentials when an operator configures them by hand. */
const CREDENTIAL_HEADER = /auth|key|token|secret/i

/** Credential-looking configured header values (a token without its scheme). */
function secretsOf(headers: Record<string, string>): string[] {
  const secrets: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) continue
    const token = withoutAuthScheme(value)
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
