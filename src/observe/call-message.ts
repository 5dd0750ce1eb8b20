import type { CallSpec } from '../call/call-spec.js'
import type { ResolvedModel } from '../config/resolve.js'
import { speaksAs } from '../dialects/index.js'
import type { CallStartMessage } from './channels.js'

/** What every message about a model call says of it; built only when a channel has subscribers. */
export function callStartMessage(gatewayId: string, spec: CallSpec): CallStartMessage {
  const message: CallStartMessage = {
    gatewayId,
    requestId: spec.requestId,
    owner: spec.owner,
    operation: spec.operation,
    model: spec.model.id,
    stream: spec.stream,
    provider: spec.model.upstream.dialect.otelProviderName,
    upstreamModel: spec.model.upstreamModel,
    startedAt: spec.startedAt,
  }
  if (spec.trace) message.trace = spec.trace
  if (spec.sessionId !== undefined) message.sessionId = spec.sessionId
  return message
}

/**
 * The status a call's client got, for `call:end` and the spans: a gateway error, or an upstream error translated, is
 * answered in the client's format, which may name only some statuses (a Google client gets 503 for a 502); an upstream's
 * own error passed through, and every success, keep their status.
 */
export function statusSent(spec: CallSpec, status: number, servedBy: ResolvedModel | undefined): number {
  if (status < 400 || (servedBy !== undefined && speaksAs(spec.inbound, servedBy.upstream.dialect))) return status
  return spec.inbound.errorStatus?.(status) ?? status
}
