// The gateway's diagnostics channels. Channels are process-wide, so every message names the gateway that sent it;
// publishing costs one `hasSubscribers` check when nobody listens. Messages never carry a key or prompt text.
import diagnosticsChannel from 'node:diagnostics_channel'
import type { IncomingHttpHeaders } from 'node:http'
import type { Operation, TokenCounts } from '../types.js'

/** Channel names, for `diagnostics_channel.subscribe(name, listener)`. */
export const gatewayChannels = {
  callStart: 'model-gateway:call:start',
  upstreamAttempt: 'model-gateway:upstream:attempt',
  callEnd: 'model-gateway:call:end',
  recordStored: 'model-gateway:record:stored',
  callServed: 'model-gateway:call:served',
  callRefused: 'model-gateway:call:refused',
  upstreamCircuit: 'model-gateway:upstream:circuit',
  upstreamRequest: 'model-gateway:upstream:request',
  recoveryOperation: 'model-gateway:recovery:operation',
  recordsTrim: 'model-gateway:records:trim',
  cache: 'model-gateway:cache',
} as const

/** What every message carries: the gateway and the request it is about. */
export interface ChannelMessage {
  /** `gateway.id` of the gateway that published it. */
  gatewayId: string
  requestId: string
}

/** The W3C trace context a client sent (`traceparent`, `tracestate`), so a subscriber can continue its trace. */
export interface TraceHeaders {
  traceparent?: string
  tracestate?: string
}

/** A validated model call about to go upstream. */
export interface CallStartMessage extends ChannelMessage {
  /** The owner id (a digest, never the key). */
  owner: string
  operation: Operation
  /** The model id the client asked for. */
  model: string
  stream: boolean
  /** The model's upstream provider as OpenTelemetry names it (`gen_ai.provider.name`). */
  provider: string
  /** The model name sent upstream. */
  upstreamModel: string
  /** `performance.now()` when the request reached the gateway. */
  startedAt: number
  /** The client's trace context, when it sent one. */
  trace?: TraceHeaders
  /**
   * The client's session, as Claude Code names it in `X-Claude-Code-Session-Id` (1-128 visible ASCII characters; a
   * malformed one is left out), when it sent one: the calls, and so the cost, of one session share it.
   */
  sessionId?: string
}

/**
 * An upstream attempt about to be sent. A subscriber may push `[name, value, …]` pairs onto `headers` (trace
 * context): they are sent with this attempt only. Published only while someone subscribes.
 */
export interface UpstreamRequestMessage extends ChannelMessage {
  upstream: string
  /** The upstream's provider as OpenTelemetry names it (`gen_ai.provider.name`). */
  provider: string
  operation: Operation
  /** The model name sent upstream. */
  model: string
  stream: boolean
  attempt: number
  /** Extra request headers, as a flat `[name, value, …]` list; empty as published. */
  headers: string[]
}

/** One upstream attempt: its response head arrived (`status`) or it failed (`error`, a GatewayError code). */
export interface UpstreamAttemptMessage extends ChannelMessage {
  /** The configured upstream's name. */
  upstream: string
  /** The model name sent upstream. */
  model: string
  /** 1 for the first attempt of a call. */
  attempt: number
  durationMs: number
  status?: number
  error?: string
}

/** A model call is over, delivered or not. */
export interface CallEndMessage extends CallStartMessage {
  /** The status the client was (or would have been) answered with. */
  status: number
  /** Whether the whole response was handed on to the client's connection (Node's `finish`, no write failed). */
  delivered: boolean
  /**
   * What is known of the delivery: `'delivered'`; `'unconfirmed'` for a whole answer, or a stream's events, of 64 KiB
   * or more handed on, which can sit unread in the sockets' buffers (a reset within `timeouts.lateResetMs` keeps it as
   * a record, a later one is not seen); `'undelivered'` when `delivered` is false.
   */
  delivery: 'delivered' | 'unconfirmed' | 'undelivered'
  /** Whether an undelivered response was kept as a recovery record. */
  recovered: boolean
  /**
   * Token counts of a 2xx call (zeros when the upstream reported none); absent otherwise. A stream the upstream did
   * not finish has the counts it reported so far, and `complete: false`.
   */
  usage?: TokenCounts
  /** With `usage`: whether the upstream finished the call (false for a stream that broke off or was cancelled). */
  complete?: boolean
  /** With `usage`: the call's cost in nano-dollars (USD × 10⁹), when `pricing` prices the model that answered. */
  cost?: number
  /**
   * Why each choice of a completed 2xx answer stopped, one per choice in choice order, in the upstream's own words
   * (`stop`, `tool_calls`, `STOP`, `MAX_TOKENS`, …), a translated call's included; absent when the answer named none.
   */
  finishReasons?: string[]
  /** The configured upstream that answered (a fallback's, when one served the call). */
  upstream?: string
  /** The alias of the upstream key that answered (never the key). */
  keyAlias?: string
  durationMs: number
  /** For a stream: ms from `startedAt` to its first relayed chunk. */
  firstChunkMs?: number
  /** With `cache` on: `hit` (served from the cache, no upstream call, no cost), `miss`, or `bypass` (not looked up). */
  cache?: 'hit' | 'miss' | 'bypass'
  /**
   * Why the call failed, when it did not end with an upstream answer: a GatewayError code, `client_disconnected`
   * (the client left before the end) or `upstream_stream_broken`. Absent for answers, errors included.
   */
  error?: string
}

/** A recovery record was written. */
export interface RecordStoredMessage extends ChannelMessage {
  owner: string
  operation: Operation
  model: string
  /** The record's `interrupted_reason`. */
  reason: string
}

/**
 * A model call answered without going upstream: it joined the same call running (`join`) or got a kept answer
 * (`replay`). No usage is reported for it; the original call's was.
 */
export interface CallServedMessage extends CallStartMessage {
  /** The request id of the call whose answer was served. */
  originalRequestId: string
  how: 'join' | 'replay'
}

/**
 * A model call the ledger refused before it went upstream: its owner reached a limit (`rate_limit_exceeded`, 429), or
 * the limits could not be checked under `limits.failClosed` (`store_unavailable`, 503). Like every refusal before
 * the upstream (a bad request, an unknown model), it has no `call:start` or `call:end`, and no usage.
 */
export interface CallRefusedMessage extends CallStartMessage {
  /** The status the client was answered with. */
  status: number
  /** The GatewayError code it was answered with. */
  error: 'rate_limit_exceeded' | 'store_unavailable'
}

/** An upstream's circuit changed: `open` (calls fail at once), `half-open` (one probe), `closed` (healthy). */
export interface UpstreamCircuitMessage {
  gatewayId: string
  upstream: string
  state: 'closed' | 'open' | 'half-open'
}

/** A Recoveries endpoint answered (or failed); `requestId` is the request's own, `recordId` the record's it named. */
export interface RecoveryOperationMessage extends ChannelMessage {
  owner: string
  operation: 'list' | 'lookup' | 'get' | 'delete' | 'deleteAll' | 'resume' | 'cancel'
  recordId?: string
  /** For `get`: whether the record was found. */
  found?: boolean
  /** A GatewayError code when it failed. */
  error?: string
  /** `performance.now()` when the request reached the gateway. */
  startedAt: number
  durationMs: number
  trace?: TraceHeaders
}

/**
 * An owner's oldest records being removed past `recovery.maxRecordsPerOwner` on Redis: `start` when this process
 * began a trim, `end` when it finished, with how many records it evicted. One trim per owner runs at a time.
 */
export interface RecordsTrimMessage {
  gatewayId: string
  owner: string
  phase: 'start' | 'end'
  /** Records removed; 0 at `start`. */
  evicted: number
}

/**
 * The response cache: a call served from it (`hit`, with the answer's age), looked up and not found (`miss`), not
 * looked up (`bypass`: `Cache-Control`, or a model the cache leaves out), or an answer kept (`stored`).
 */
export interface CacheMessage extends ChannelMessage {
  owner: string
  operation: Operation
  model: string
  result: 'hit' | 'miss' | 'bypass' | 'stored'
  /** For a hit: ms since the answer was stored. */
  ageMs?: number
}

/** The channel objects; held here so their subscribers are never collected. */
export const channels = {
  callStart: diagnosticsChannel.channel(gatewayChannels.callStart),
  upstreamAttempt: diagnosticsChannel.channel(gatewayChannels.upstreamAttempt),
  callEnd: diagnosticsChannel.channel(gatewayChannels.callEnd),
  recordStored: diagnosticsChannel.channel(gatewayChannels.recordStored),
  callServed: diagnosticsChannel.channel(gatewayChannels.callServed),
  callRefused: diagnosticsChannel.channel(gatewayChannels.callRefused),
  upstreamCircuit: diagnosticsChannel.channel(gatewayChannels.upstreamCircuit),
  upstreamRequest: diagnosticsChannel.channel(gatewayChannels.upstreamRequest),
  recoveryOperation: diagnosticsChannel.channel(gatewayChannels.recoveryOperation),
  recordsTrim: diagnosticsChannel.channel(gatewayChannels.recordsTrim),
  cache: diagnosticsChannel.channel(gatewayChannels.cache),
}

/** The client's trace context from request headers, or undefined when it sent none (the common case: no object). */
export function traceHeadersOf(headers: IncomingHttpHeaders): TraceHeaders | undefined {
  const { traceparent, tracestate } = headers
  if (typeof traceparent !== 'string') return undefined
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent }
}
