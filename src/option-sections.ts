// The gateway's option sections below the top level (re-exported by src/types.ts, where GatewayOptions gathers them).
import type { OwnerLimits } from './ledger/types.js'

/** Recovery settings. */
export interface RecoveryOptions {
  /** Keep captured records this long. @default 259200000 (3 days) */
  ttlMs?: number
  /** Request bodies above this many bytes are stored as `__OMITTED_TOO_LARGE__`. @default 20971520 (20 MiB) */
  maxStoredRequestBytes?: number
  /** Byte bound of the default in-memory store (ignored when `store` is given). @default 268435456 (256 MiB) */
  maxMemoryBytes?: number
  /** Records one owner may keep; past it that owner's oldest go first (logged once per trim, with a count). @default 10000 */
  maxRecordsPerOwner?: number
  /**
   * Bytes one owner may keep in the default in-memory store (its records and its background responses' state), so
   * one owner never pushes out another's; past it that owner's oldest records go first (logged), then its background
   * responses are stopped `failed`. Ignored with `store`. @default 134217728 (128 MiB, half the default store: a 20 MB request with its answer fits)
   */
  maxBytesPerOwner?: number
  /**
   * Stream bytes the gateway holds in memory at once for resumes, joined retries and records, all streams together
   * (the streams of `'finish'` and of `Idempotency-Key` calls). A stream past it, or past what one record of its owner
   * can hold, is no longer resumable; one whose client left is stopped and not kept, with a `warn` line. Held streams
   * grow the process's resident memory by at most 1.5 times this (see docs/operations/limits.md).
   * @default 268435456 (256 MiB)
   */
  maxHeldStreamBytes?: number
  /**
   * What a stream does when its client leaves: `'cancel'` aborts the upstream call (a user who closed a tab saves the
   * tokens); `'finish'` runs it to its end, keeps it as a recovery record and lets it be resumed
   * (`GET /v1/recoveries/{request_id}/stream`). A stream with an `Idempotency-Key` always finishes. @default 'cancel'
   */
  streams?: 'cancel' | 'finish'
  /**
   * Records that could not be written (the store down past the writer's retries), and the outcomes of idempotency
   * keys whose calls ended meanwhile, are held in memory, at most this many, and written once the store answers
   * again; past it the oldest is dropped (logged). @default 1000
   */
  maxPendingRecords?: number
  /** Byte bound of those held records (request and response bodies). @default 67108864 (64 MiB) */
  maxPendingBytes?: number
}

/**
 * Serving a call again instead of paying for it twice: SDK retries and `Idempotency-Key` requests are answered from
 * the call still running or the response kept (docs/guides/retries-and-idempotency.md).
 */
export interface IdempotencyOptions {
  /**
   * Treat a request with `x-stainless-retry-count` ≥ 1 (sent by the OpenAI and Anthropic SDKs on every retry) or
   * `amz-sdk-request: attempt=` ≥ 2 (the AWS SDKs') as a retry of the same call: it joins the call still running or
   * gets the answer already made. @default true
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
  /**
   * How long a call with an `Idempotency-Key` waits for a store that cannot be reached (Redis down) before it is
   * answered 503 `store_unavailable` with `retry-after` (a store attempt under way is let finish). @default 3000
   */
  storeWaitMs?: number
  /**
   * Run a keyed call unguarded when its key cannot be claimed within `storeWaitMs`, instead of the 503: a repeat
   * on another process (or one whose answer the store holds) may then be paid for again. @default false
   */
  failOpen?: boolean
}

/**
 * Background calls (`POST /v1/responses` with `background: true`): the gateway runs them itself and keeps their
 * state and events for `recovery.ttlMs` in the store, served by id (README, "Background responses").
 */
export interface BackgroundOptions {
  /** Events one background call may keep; past it the call is stopped and ends `failed`. @default 100000 */
  maxEvents?: number
  /** Bytes of events one background call may keep; past it the call is stopped and ends `failed`. @default 67108864 (64 MiB) */
  maxBytes?: number
  /**
   * How long the process running a background call vouches for it without writing its state again (it writes it
   * three times within that). A running call whose lease passed is given up one more lease after a reader first saw
   * it passed, and then reads `failed` everywhere: its process stopped, or could not reach the store all that time.
   * A process that comes back before then keeps the call; one that comes back after stops it and writes nothing
   * more. Processes sharing a store should share this value. @default 30000
   */
  leaseMs?: number
  /**
   * Background calls one owner may have running in this process at once; a create past it is answered 429 in its
   * dialect's shape, before anything is kept or sent upstream. @default 32
   */
  maxRunningPerOwner?: number
  /** Background calls all owners together may have running in this process at once; past it likewise. @default 1024 */
  maxRunning?: number
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
  /**
   * Each owner's rate limits and budget (the guide "Limits and cost"): one set for every owner, or a function of the
   * owner id (the one usage events carry) returning that owner's set, or undefined for none (sync or async). Checked
   * before a call goes upstream; tokens and cost are charged with the call's real usage when it ends, so a call may
   * overshoot a limit by its own size. Replays, joins and recoveries are free. @default undefined (no limits, no store I/O)
   */
  owners?: OwnerLimits | ((owner: string) => OwnerLimits | undefined | Promise<OwnerLimits | undefined>)
  /**
   * What a limit check does when the store cannot answer (Redis down): `false` lets the call through (one warn line
   * per 10 s); `true` refuses it with 503. @default false
   */
  failClosed?: boolean
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
   * How long the connection of a whole answer, or of a resumable stream, is watched once it was handed on: a reset in
   * that time, before the client sent anything more, means it lost the rest, and the answer is kept as interrupted.
   * @default 3000
   */
  lateResetMs?: number
}

/** Keep-alive comments on streams, for proxies and CDNs that cut a connection that stays quiet too long. */
export interface KeepAliveOptions {
  /**
   * A stream whose client got no byte for this many ms (before the upstream's first byte too) gets an SSE comment,
   * `: keep-alive`, which SSE parsers skip; 0 turns it off. One before the upstream's first byte sends the 200 and
   * the stream's headers: an upstream error after that is the stream's last event, in the client's format.
   * @default 15000
   */
  streamMs?: number
}

/** Browser access (CORS). Off unless set. */
export interface CorsOptions {
  /**
   * Origins whose scripts may call the gateway, as browsers send them (`https://app.example.com`: scheme, host and
   * port), or `'*'` for any. Their keys still travel in headers, never cookies, so `'*'` gives no one else's access.
   * An origin may start its host with one wildcard label, `https://*.example.com`: it matches `https://app.example.com`,
   * never `https://example.com`, `https://a.b.example.com` or `https://app.example.com.evil.net`; any other `*` is refused.
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
