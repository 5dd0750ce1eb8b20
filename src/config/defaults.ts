// The one table of defaults. The options reference (docs/reference/options.md) and the JSDoc `@default`s in types.ts state
// the same numbers; test/docs/references.test.ts checks the reference against this table.
import { DIALECT_UPSTREAM_OPTIONS } from '../dialects/index.js'

/** Defaults of every numeric option. */
export const DEFAULTS = {
  recovery: {
    ttlMs: 3 * 24 * 3600_000,
    maxStoredRequestBytes: 20 * 1024 * 1024,
    maxMemoryBytes: 256 * 1024 * 1024,
    maxRecordsPerOwner: 10_000,
    maxBytesPerOwner: 128 * 1024 * 1024,
    maxHeldStreamBytes: 256 * 1024 * 1024,
    maxPendingRecords: 1_000,
    maxPendingBytes: 64 * 1024 * 1024,
  },
  idempotency: {
    retryWindowMs: 10 * 60_000,
    ttlMs: 24 * 3600_000,
    recentMs: 2 * 60_000,
    recentMaxBytes: 64 * 1024 * 1024,
    waitMs: 10_000,
    storeWaitMs: 3_000,
  },
  background: {
    maxEvents: 100_000,
    maxBytes: 64 * 1024 * 1024,
    leaseMs: 30_000,
    maxRunningPerOwner: 32,
    maxRunning: 1024,
  },
  limits: {
    maxRequestBytes: 64 * 1024 * 1024,
    maxResponseBytes: 256 * 1024 * 1024,
    maxJsonDepth: 1000,
    maxInFlightRequestBytes: 1024 * 1024 * 1024,
    maxInFlightRequestBytesPerOwner: 256 * 1024 * 1024,
    maxDecodingBytes: 256 * 1024 * 1024,
  },
  circuit: {
    failures: 5,
    cooldownMs: 30_000,
  },
  timeouts: {
    upstreamMs: 10 * 60_000,
    connectMs: 10_000,
    requestBodyMs: 60_000,
    clientWriteMs: 60_000,
    lateResetMs: 3_000,
  },
  cors: {
    maxAgeSeconds: 600,
  },
  keepAlive: {
    streamMs: 15_000,
  },
} as const

/** The keys each options object may hold; anything else is a typo, answered with the nearest of these. */
export const KNOWN_KEYS = {
  top: [
    'upstreams',
    'models',
    'auth',
    'store',
    'recovery',
    'idempotency',
    'background',
    'limits',
    'timeouts',
    'keepAlive',
    'cors',
    'translation',
    'cache',
    'console',
    'pricing',
    'onUsage',
    'logger',
    'interceptors',
    'dispatcher',
    'proxy',
  ],
  // With the options of one dialect's upstreams (`anthropicVersion`): a misspelt one is then named, its default is the dialect's.
  upstream: [
    'type',
    'baseUrl',
    'apiKey',
    'apiKeys',
    'keySelection',
    'keyless',
    'headers',
    'circuit',
    'dispatcher',
    ...DIALECT_UPSTREAM_OPTIONS.keys(),
  ],
  model: ['id', 'upstream', 'upstreamModel', 'ownedBy', 'created', 'fallbacks', 'maxOutputTokens', 'contextWindow', 'aliases'],
  auth: ['apiKeys', 'authenticate'],
  recovery: [...Object.keys(DEFAULTS.recovery), 'streams'],
  idempotency: ['sdkRetries', 'failOpen', ...Object.keys(DEFAULTS.idempotency)],
  background: Object.keys(DEFAULTS.background),
  limits: [...Object.keys(DEFAULTS.limits), 'owners', 'failClosed'],
  timeouts: Object.keys(DEFAULTS.timeouts),
  cors: ['origins', 'allowHeaders', 'maxAgeSeconds'],
  keepAlive: Object.keys(DEFAULTS.keepAlive),
  translation: ['strict'],
} as const
