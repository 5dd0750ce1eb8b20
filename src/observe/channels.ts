// The gateway's diagnostics channels. Channels are process-wide, so every message names the gateway that sent it;
// publishing costs one `hasSubscribers` check when nobody listens. Messages never carry a key or prompt text.
import diagnosticsChannel from 'node:diagnostics_channel'
import type { Operation, TokenCounts } from '../types.js'

/** Channel names, for `diagnostics_channel.subscribe(name, listener)`. */
export const gatewayChannels = {
  callStart: 'model-gateway:call:start',
  upstreamAttempt: 'model-gateway:upstream:attempt',
  callEnd: 'model-gateway:call:end',
  recordStored: 'model-gateway:record:stored',
  callServed: 'model-gateway:call:served',
  upstreamCircuit: 'model-gateway:upstream:circuit',
} as const

/** What every message carries: the gateway and the request it is about. */
export interface ChannelMessage {
  /** `gateway.id` of the gateway that published it. */
  gatewayId: string
  requestId: string
}

/** A validated model call about to go upstream. */
export interface CallStartMessage extends ChannelMessage {
  /** The owner id (a digest, never the key). */
  owner: string
  operation: Operation
  /** The model id the client asked for. */
  model: string
  stream: boolean
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
  /** Whether the whole response reached the client. */
  delivered: boolean
  /** Whether an undelivered response was kept as a recovery record. */
  recovered: boolean
  /** Token counts of a completed 2xx call (zeros when the upstream reported none); absent otherwise. */
  usage?: TokenCounts
  /** The configured upstream that answered (a fallback's, when one served the call). */
  upstream?: string
  /** The alias of the upstream key that answered (never the key). */
  keyAlias?: string
  durationMs: number
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

/** An upstream's circuit changed: `open` (calls fail at once), `half-open` (one probe), `closed` (healthy). */
export interface UpstreamCircuitMessage {
  gatewayId: string
  upstream: string
  state: 'closed' | 'open' | 'half-open'
}

/** The channel objects; held here so their subscribers are never collected. */
export const channels = {
  callStart: diagnosticsChannel.channel(gatewayChannels.callStart),
  upstreamAttempt: diagnosticsChannel.channel(gatewayChannels.upstreamAttempt),
  callEnd: diagnosticsChannel.channel(gatewayChannels.callEnd),
  recordStored: diagnosticsChannel.channel(gatewayChannels.recordStored),
  callServed: diagnosticsChannel.channel(gatewayChannels.callServed),
  upstreamCircuit: diagnosticsChannel.channel(gatewayChannels.upstreamCircuit),
}
