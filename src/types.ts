// Every public type of the package. Runtime code lives elsewhere; this file only describes.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Keyv from 'keyv'
import type { Dispatcher } from 'undici'
import type { CacheFilter, CacheOptions } from './cache/types.js'
import type { ConsoleOptions } from './console/options.js'
import type { Operation } from './dialects/names.js'
import type { ModelPrice, OwnerUsage } from './ledger/types.js'
import type {
  BackgroundOptions,
  CorsOptions,
  IdempotencyOptions,
  KeepAliveOptions,
  LimitOptions,
  RecoveryOptions,
  TimeoutOptions,
} from './option-sections.js'
import type { UpstreamOptions } from './upstream-options.js'

export type { CacheableCall, CacheFilter, CacheOptions } from './cache/types.js'
export type { ConsoleOptions } from './console/options.js'
export type { AnthropicOptionFields } from './dialects/anthropic/types.js'
export type { AzureOptionFields } from './dialects/azure/types.js'
export type { AwsCredentialIdentity, BedrockCredentials, BedrockOptionFields } from './dialects/bedrock/types.js'
export type { GeminiOptionFields } from './dialects/gemini/types.js'
export type { DialectName, DialectOptionFields, Operation } from './dialects/names.js'
export type { OpenAIOptionFields } from './dialects/openai/types.js'
export type { VertexCredentials, VertexOptionFields, VertexToken } from './dialects/vertex/types.js'
export type { ModelPrice, OwnerLimits, OwnerUsage } from './ledger/types.js'
export type {
  BackgroundOptions,
  CorsOptions,
  IdempotencyOptions,
  KeepAliveOptions,
  LimitOptions,
  RecoveryOptions,
  TimeoutOptions,
} from './option-sections.js'
export type {
  BedrockUpstreamOptions,
  CommonUpstreamOptions,
  KeySelection,
  UpstreamKeyOptions,
  UpstreamOptions,
  UpstreamOptionsOf,
  VertexUpstreamOptions,
} from './upstream-options.js'

/**
 * Token counts in one shape for every format. `input_tokens` counts every prompt token (those read from or written to
 * a prompt cache included) and `output_tokens` every generated one (reasoning included); the breakdown fields say how
 * many of them were of each kind, 0 when the upstream reported none.
 */
export interface TokenCounts {
  input_tokens: number
  output_tokens: number
  total_tokens: number
  /** Of `input_tokens`, those read from a prompt cache. */
  cached_input_tokens: number
  /** Of `input_tokens`, those written to a prompt cache (Anthropic bills them apart). */
  cache_write_tokens: number
  /** Of `output_tokens`, the model's reasoning (thinking) tokens. */
  reasoning_tokens: number
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
  /**
   * When the model was released, Unix seconds: `created` in OpenAI's model list, `created_at` in Anthropic's (the
   * epoch when unset, as Anthropic's API says an unknown release date). @default the time the gateway was created
   */
  created?: number
  /**
   * Models tried in order when this one's upstream cannot be reached or answers 429, 500, 502, 503, 504 or 529 (never
   * after a timeout or a broken connection, when the first may still be working). A fallback of the other format
   * gets the request translated and its answer comes back in the client's format; one whose format cannot express
   * a field of the request is skipped, with a `warn` line naming the field. @default []
   */
  fallbacks?: readonly string[]
  /**
   * The output token limit (`max_tokens`) sent to an Anthropic upstream, which requires one, when a request translated
   * from another format sets none; also the model's `max_tokens` (and Gemini's `outputTokenLimit`) in its model
   * object, null (absent) when unset. @default 4096
   */
  maxOutputTokens?: number
  /**
   * The model's context window in tokens: `max_input_tokens` of its Anthropic model object, `inputTokenLimit` of its
   * Google one. @default undefined (null in the model object: not known)
   */
  contextWindow?: number
  /**
   * Other names a call may ask for the model by: the Bedrock and Vertex spellings of one model
   * (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5@20250929`) reach it whatever its upstream.
   * Letters, digits and `. _ - / @ :`; none may be another model's id or alias. Listings show the id alone. @default []
   */
  aliases?: readonly string[]
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

/** Normalised token usage of one completed upstream call. */
export interface UsageEvent extends TokenCounts {
  requestId: string
  /** The owner id (a hex digest, never the key). */
  owner: string
  model: string
  endpoint: Operation
  /** True when the client had gone and the response was kept as a recovery record. */
  recovered: boolean
  /** Present (true) for a call served from the response cache: no upstream call was made, and its cost is 0. @default absent */
  cached?: true
  /** The configured upstream that answered: the model's own, or a fallback's. */
  upstream: string
  /** The alias of the upstream key that answered (`key-1`… or the configured `alias`); absent for a keyless upstream. */
  keyAlias?: string
  /**
   * False when the upstream never finished the call (a stream that broke off, or one cancelled when its client left):
   * the counts are then what the upstream had reported so far.
   */
  complete: boolean
  /** The call's cost in nano-dollars (USD × 10⁹, an integer), when `pricing` prices the model that answered. */
  cost?: number
  /**
   * The client's session, from `X-Claude-Code-Session-Id` (1-128 visible ASCII characters; a malformed one is left
   * out): sum a session's `cost` by it. @default absent (the client sent none)
   */
  sessionId?: string
}

/** Where the gateway reports problems it cannot answer to a client (failed record writes, store errors). */
export interface GatewayLogger {
  /** Details of a call an operator may want when looking into it (the hint fields a translation dropped, by name). @default none */
  debug?(message: string, meta?: Record<string, unknown>): void
  /** Events an operator may want to reconcile later (a client that left a call the gateway finishes). @default none */
  info?(message: string, meta?: Record<string, unknown>): void
  warn(message: string, meta?: Record<string, unknown>): void
  error(message: string, meta?: Record<string, unknown>): void
}

/** How translation between formats treats what the target's format lacks or refuses. */
export interface TranslationOptions {
  /**
   * Refuse (400, naming the field) rather than drop and name (`x-model-gateway-dropped`) a sampling knob or a request
   * for thought summaries the target lacks or refuses (Gemini's `topK` toward OpenAI; `top_k` or a temperature other
   * than 1 toward Anthropic with thinking on). @default false
   */
  strict?: boolean
}

/** Options of `createGateway`. Unknown keys are rejected with the nearest valid name. */
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
  /** SDK retries and `Idempotency-Key`. */
  idempotency?: IdempotencyOptions
  /** Bounds and lease of background calls. */
  background?: BackgroundOptions
  /** Request limits. */
  limits?: LimitOptions
  /** Timeouts. */
  timeouts?: TimeoutOptions
  /** Keep-alive comments on quiet streams. @default { streamMs: 15000 } */
  keepAlive?: KeepAliveOptions
  /** Browser access: answers preflights and sets CORS headers on every answer. @default undefined (off) */
  cors?: CorsOptions
  /** Translation between formats. @default { strict: false } */
  translation?: TranslationOptions
  /** The exact-match response cache (docs/guides/caching.md). @default undefined (off) */
  cache?: CacheOptions
  /** The console page under the gateway's mount (docs/guides/console.md). @default undefined (off) */
  console?: ConsoleOptions
  /**
   * Prices of models by id, in USD per million tokens: usage events, `call:end` and the OTel cost counter then carry
   * each call's cost in nano-dollars, and `limits.owners.costPerDay` can be enforced. Ids of models this gateway does
   * not offer are taken (one table may serve many gateways) and named in a warn line. @default undefined (no cost)
   */
  pricing?: Record<string, ModelPrice>
  /** Called once per 2xx upstream call with normalised token counts (0 when the upstream reported none). @default undefined */
  onUsage?: (usage: UsageEvent) => void
  /** Receives warnings and errors (and debug lines, when it has `debug`). @default console, without its debug lines */
  logger?: GatewayLogger
  /**
   * undici interceptors, `(dispatch) => dispatch`, every upstream call passes through (logging, signing, a header of
   * your egress): **the first listed is outermost**, so a request meets them in the order listed, as Express middleware
   * reads. That is the reverse of undici's `dispatcher.compose(a, b)`, where `b` is outermost. They wrap every
   * dispatcher, the gateway's and each upstream's own. @default [] (none, and nothing paid per call)
   */
  interceptors?: readonly Dispatcher.DispatcherComposeInterceptor[]
  /**
   * An undici `Dispatcher` every upstream call is sent through instead of the gateway's own pool (an `Agent` with your
   * TLS settings, a `ProxyAgent`). The gateway neither closes nor destroys it: it is yours. Not with `proxy`.
   * @default undefined (a keep-alive `Agent` timed by `timeouts`)
   */
  dispatcher?: Dispatcher
  /**
   * `'env'`: the gateway's pool is undici's `EnvHttpProxyAgent`, which sends calls through the proxy in `HTTPS_PROXY`
   * (`https` upstreams) or `HTTP_PROXY` (`http` ones), read when the gateway is created, except to hosts `NO_PROXY`
   * lists (read on each call). Not with `dispatcher`. @default undefined (no proxy)
   */
  proxy?: 'env'
}

/** One recovery record as list and lookup return it: never the bodies. */
export interface RecoverySummary {
  request_id: string
  /** Unix seconds. */
  created_at: number
  interrupted_reason: string
  request_body_hash: string
}

/** One recovery record in full, as `GET /v1/recoveries/{request_id}` returns it. */
export interface RecoveryRecord extends RecoverySummary {
  request: {
    /** The request body as received, or `__OMITTED_TOO_LARGE__`. */
    body_raw: string
    request_body_hash: string
    /** The gateway path the request was sent to, e.g. `/v1/chat/completions`. */
    path: string
    endpoint: Operation
    /** The model id the client asked for. */
    model: string
  }
  response: {
    body_raw: string
    /** Byte length of `body_raw` in UTF-8. */
    response_body_size: number
    status: number
    content_type: string
    /**
     * A streamed response: its events exactly as relayed (with their `id` fields); `body_raw` is then the stream
     * assembled into the non-streaming answer of the client's format.
     */
    stream_raw?: string
  }
  /**
   * When the answer was first served again to a repeat of the call (a replay of its `Idempotency-Key`, an SDK retry),
   * Unix seconds: it reached a client after all. Absent until then.
   */
  served_again_at?: number
}

/**
 * A body a host framework already read, handed over by an adapter. `raw` is used whenever present; `parsed`
 * only once the request stream has been drained (a parser ran), because some parsers leave a placeholder
 * (`{}`) on requests they skipped, whose bodies are still unread in the stream.
 */
export interface PreparsedBody {
  /** The raw bytes when the host parser kept them (`express.raw()`, Koa's `rawBody`). */
  raw?: Buffer | string
  /** The parsed value when only that is left (`express.json()`, `@koa/bodyparser`). */
  parsed?: unknown
}

/** What an adapter tells the gateway about a request beyond `req` and `res`. */
export interface HandleOptions {
  /** The path relative to where the gateway is mounted, with its query. @default req.url */
  path?: string
  /** A body the host framework already read. @default undefined (the gateway reads `req`) */
  body?: PreparsedBody
  /** Answer 404 for every path the gateway does not know (those under its own route prefixes always are), instead of leaving them to the host. @default false */
  claimUnknown?: boolean
}

/** What `gateway.status()` and `GET /v1/health` answer. */
export interface GatewayStatus {
  /** `degraded` when the store is unavailable or the gateway is closing. */
  status: 'ok' | 'degraded'
  /** Whether the gateway's store answered a cheap check within a second. */
  store: 'ok' | 'unavailable'
  /**
   * Each upstream's circuit by name (`open`: its calls fail at once; see `circuit`). Only `gateway.status()` has it:
   * the unauthenticated `GET /v1/health` does not name upstreams.
   */
  upstreams?: Record<string, 'closed' | 'open' | 'half-open'>
}

/** A gateway: hand it requests through an adapter, close it on shutdown. */
export interface Gateway {
  /** Unique per gateway; diagnostics channel messages carry it as `gatewayId`. */
  readonly id: string
  /** Serves a request if it is the gateway's; resolves false (and leaves `res` alone) when it is not. */
  handle(req: IncomingMessage, res: ServerResponse, options?: HandleOptions): Promise<boolean>
  /**
   * Stops taking requests, waits for in-flight upstream calls and record writes (at most `timeoutMs`, default
   * 30 s, then aborts what remains), and closes the store.
   */
  close(options?: { timeoutMs?: number }): Promise<void>
  /** The gateway's health, as `GET /v1/health` answers it, for hosts that serve their own health route. */
  status(): Promise<GatewayStatus>
  /**
   * Resolves when the store answers; rejects with GatewayError('store_unavailable'), naming why, when it cannot
   * within the store deadline (5 s). Opt-in, before `listen`: without it a store that cannot be reached is only
   * found on the first call that needs it.
   */
  ready(): Promise<void>
  /**
   * What an owner (the id usage events carry) used in its current windows, from the store the limits are kept in;
   * all zeros without `limits.owners`. Rejects with GatewayError('store_unavailable') when that store cannot answer.
   */
  usage(owner: string): Promise<OwnerUsage>
  /** The response cache: `delete({ owner?, model? })` evicts an owner's, a model's or all cached answers; resolves how many (0 when off). */
  readonly cache: { delete(filter?: CacheFilter): Promise<number> }
}

/** Text stored in place of a request body above `recovery.maxStoredRequestBytes`. */
export const OMITTED_TOO_LARGE = '__OMITTED_TOO_LARGE__'
