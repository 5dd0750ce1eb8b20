// Every public type of the package. Runtime code lives elsewhere; this file only describes.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Keyv from 'keyv'
import type { DialectName, Operation } from './dialects/names.js'

export type { DialectName, Operation } from './dialects/names.js'

/** Token counts in one shape for every format. */
export interface TokenCounts {
  input_tokens: number
  output_tokens: number
  total_tokens: number
}

/** How a pool of upstream keys picks the key of each call. */
export type KeySelection = 'round-robin' | 'least-in-flight'

/** One upstream API the gateway forwards to. */
export interface UpstreamOptions {
  /** `openai`: any OpenAI-compatible chat-completions API; `gemini`: the Gemini API; `anthropic`: Anthropic's Messages API. */
  type: DialectName
  /** Base URL, e.g. `https://api.openai.com/v1` or `https://generativelanguage.googleapis.com`. */
  baseUrl: string
  /** The gateway's own key for this upstream; never shown to clients. Required unless `apiKeys`, `keyless` or a loopback host. */
  apiKey?: string
  /**
   * A pool of keys instead of one: calls are spread by `keySelection`, and a key answered 401, 403 or 429 rests
   * (its `retry-after`, else 1 s doubling to 60 s) while the call moves to the next. `alias` names the key in logs
   * and usage events. @default undefined
   */
  apiKeys?: ReadonlyArray<string | UpstreamKeyOptions>
  /**
   * How a pool picks each call's key among the keys not resting: `'round-robin'` spreads calls by weight (smooth
   * weighted round robin); `'least-in-flight'` takes the key with the fewest calls of this process in flight (a
   * stream counts until it ends), then the heavier, then the one picked longest ago. @default 'round-robin'
   */
  keySelection?: KeySelection
  /** An upstream that takes no key (a local model server); loopback hosts are keyless without it. @default false */
  keyless?: boolean
  /** Extra headers sent with every upstream request (one a dialect forwards, such as `anthropic-beta`, replaces the client's). @default {} */
  headers?: Record<string, string>
  /**
   * `type: 'anthropic'` only: the `anthropic-version` of calls translated from another dialect, and of Anthropic
   * clients' calls that carry none (a client's own `anthropic-version` and `anthropic-beta` go upstream as they came).
   * A date, `YYYY-MM-DD`. @default '2023-06-01'
   */
  anthropicVersion?: string
  /**
   * `type: 'openai'` only: the API calls translated from another dialect (Gemini, Anthropic clients) take.
   * `'responses'` sends them to `POST {baseUrl}/responses` (for models only the Responses API serves, such as
   * `gpt-5-codex`), with `store: false`; chat-completions and Responses clients' own calls stay passthrough.
   * @default 'chat'
   */
  api?: 'chat' | 'responses'
  /**
   * After `failures` failed calls in a row (unreachable, or 429/5xx) calls fail at once for `cooldownMs`, then one
   * probe decides. @default { failures: 5, cooldownMs: 30000 }
   */
  circuit?: { failures?: number; cooldownMs?: number }
}

/** One key of an upstream's pool. */
export interface UpstreamKeyOptions {
  key: string
  /** Relative share of calls, a positive integer. @default 1 */
  weight?: number
  /** Its name in logs and usage events (letters, digits, `. _ -`). @default `key-<n>`, its position from 1 */
  alias?: string
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
  /**
   * Models tried in order when this one's upstream cannot be reached or answers 429, 500, 502, 503, 504 or 529 (never
   * after a timeout or a broken connection, when the first may still be working). A fallback of the other format
   * gets the request translated and its answer comes back in the client's format; one whose format cannot express
   * a field of the request is skipped, with a `warn` line naming the field. @default []
   */
  fallbacks?: readonly string[]
  /**
   * The output token limit (`max_tokens`) sent to an Anthropic upstream, which requires one, when a request translated
   * from another format sets none. @default 4096
   */
  maxOutputTokens?: number
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
  /** Records one owner may keep; past it that owner's oldest go first (each logged with its request id). @default 10000 */
  maxRecordsPerOwner?: number
  /**
   * Bytes one owner may keep in the default in-memory store, so one owner's records never push out another's;
   * past it that owner's oldest go first (logged). Ignored with `store`. @default 134217728 (128 MiB, half the default store: a 20 MB request with its answer fits)
   */
  maxBytesPerOwner?: number
  /**
   * Stream bytes the gateway holds in memory at once for resumes, joined retries and records, all streams together
   * (the streams of `'finish'` and of `Idempotency-Key` calls). A stream past it, or past what one record of its owner
   * can hold, is no longer resumable; one whose client left is stopped and not kept, with a `warn` line.
   * @default 536870912 (512 MiB)
   */
  maxHeldStreamBytes?: number
  /**
   * What a stream does when its client leaves: `'cancel'` aborts the upstream call (a user who closed a tab saves the
   * tokens); `'finish'` runs it to its end, keeps it as a recovery record and lets it be resumed
   * (`GET /v1/recoveries/{request_id}/stream`). A stream with an `Idempotency-Key` always finishes. @default 'cancel'
   */
  streams?: 'cancel' | 'finish'
}

/**
 * Serving a call again instead of paying for it twice: SDK retries and `Idempotency-Key` requests are answered from
 * the call still running or the response kept (README, "Retries and idempotency").
 */
export interface IdempotencyOptions {
  /**
   * Treat a request with `x-stainless-retry-count` ≥ 1 (sent by the OpenAI SDKs on every retry) as a retry of the
   * same call: it joins the call still running or gets the answer already made. @default true
   */
  sdkRetries?: boolean
  /** How old a recovery record may be for an SDK retry to be served from it. @default 600000 (10 minutes) */
  retryWindowMs?: number
  /** How long the answer of a call with an `Idempotency-Key` is kept for a repeat of that key. @default 86400000 (24 h) */
  ttlMs?: number
  /**
   * How long this process keeps the answers of SDK calls in memory (no store I/O), so a retry whose first answer
   * TCP reported delivered but the client never read is still served. @default 120000 (2 minutes)
   */
  recentMs?: number
  /** Byte bound of those answers kept in memory. @default 67108864 (64 MiB) */
  recentMaxBytes?: number
  /**
   * How long a repeat waits for the same call running in another gateway process before it is answered 409
   * `idempotency_in_flight` with `retry-after` (the SDKs then come back). @default 10000
   */
  waitMs?: number
}

/** Request limits. */
export interface LimitOptions {
  /** Largest request body accepted; larger ones get 413 and are not forwarded. @default 67108864 (64 MiB) */
  maxRequestBytes?: number
  /**
   * Largest upstream response body the gateway holds whole (non-streaming answers and upstream errors); past it the
   * upstream call is aborted and the client gets 502 `upstream_response_too_large`. Streams are relayed unbuffered.
   * @default 268435456 (256 MiB)
   */
  maxResponseBytes?: number
  /** Deepest nesting of objects and arrays in a request body; deeper bodies get 400 (no LLM request nests so deep). @default 1000 */
  maxJsonDepth?: number
  /**
   * Request-body bytes the gateway holds at once, all requests together, counted as they arrive (a declared length
   * alone holds nothing); past it a request gets 503 with `retry-after`. @default 1073741824 (1 GiB)
   */
  maxInFlightRequestBytes?: number
  /** The same bound for one owner, so no client takes the whole budget. @default 268435456 (256 MiB) */
  maxInFlightRequestBytesPerOwner?: number
  /**
   * Decoded bytes of compressed (gzip, deflate, br) whole upstream answers being decoded at once, all calls together;
   * an answer that would pass it fails with 502 `upstream_response_too_large`, so gzip bombs cannot exhaust memory.
   * @default 268435456 (256 MiB)
   */
  maxDecodingBytes?: number
}

/** Timeouts. */
export interface TimeoutOptions {
  /** Longest wait for an upstream's response headers, and between two body chunks. @default 600000 (10 min) */
  upstreamMs?: number
  /** Longest wait for a TCP/TLS connection to an upstream. @default 10000 */
  connectMs?: number
  /** Longest time a request body may take to arrive; past it the client gets 408 and the connection closes. @default 60000 */
  requestBodyMs?: number
  /**
   * Longest time a client may take none of the bytes waiting for it (a frozen client: connection open, nothing
   * read); past it the connection is cut and the answer kept as interrupted (`write failed: ETIMEDOUT`). A slow client
   * that takes some bytes in every such period is not cut. @default 60000
   */
  clientWriteMs?: number
  /**
   * How long the connection of a whole answer of 64 KiB or more is watched once the answer was handed on: a reset in
   * that time, before the client sent anything more, means it lost the rest, and the answer is kept as interrupted.
   * @default 3000
   */
  lateResetMs?: number
}

/** Browser access (CORS). Off unless set. */
export interface CorsOptions {
  /**
   * Origins whose scripts may call the gateway, as browsers send them (`https://app.example.com`: scheme, host and
   * port), or `'*'` for any. Their keys still travel in headers, never cookies, so `'*'` gives no one else's access.
   */
  origins: readonly string[] | '*'
  /**
   * Request headers a browser may send besides the ones the SDKs use (`authorization`, `content-type`,
   * `x-goog-api-key`, `x-goog-api-client`, `idempotency-key`, `last-event-id`, `openai-organization`, `openai-project`,
   * `traceparent`, `tracestate` and every `x-stainless-*`). @default []
   */
  allowHeaders?: readonly string[]
  /** How long a browser may reuse a preflight answer, in seconds. @default 600 */
  maxAgeSeconds?: number
}

/** Normalised token usage of one completed upstream call. */
export interface UsageEvent extends TokenCounts {
  requestId: string
  /** The owner id (a hex digest, never the key). */
  owner: string
  model: string
  endpoint: Operation
  /** True when the client had gone and the response was kept as a recovery record. */
  recovered: boolean
  /** The configured upstream that answered: the model's own, or a fallback's. */
  upstream: string
  /** The alias of the upstream key that answered (`key-1`… or the configured `alias`); absent for a keyless upstream. */
  keyAlias?: string
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
  /** Request limits. */
  limits?: LimitOptions
  /** Timeouts. */
  timeouts?: TimeoutOptions
  /** Browser access: answers preflights and sets CORS headers on every answer. @default undefined (off) */
  cors?: CorsOptions
  /** Called once per completed 2xx upstream call with normalised token counts (0 when the upstream reported none). @default undefined */
  onUsage?: (usage: UsageEvent) => void
  /** Receives warnings and errors (and debug lines, when it has `debug`). @default console, without its debug lines */
  logger?: GatewayLogger
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
  /** Answer 404 for paths the gateway does not know, instead of leaving them to the host. @default false */
  claimUnknown?: boolean
}

/** What `gateway.status()` and `GET /v1/health` answer. */
export interface GatewayStatus {
  /** `degraded` when the store is unavailable or the gateway is closing. */
  status: 'ok' | 'degraded'
  /** Whether the recovery store answered a cheap check within a second. */
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
}

/** Text stored in place of a request body above `recovery.maxStoredRequestBytes`. */
export const OMITTED_TOO_LARGE = '__OMITTED_TOO_LARGE__'
