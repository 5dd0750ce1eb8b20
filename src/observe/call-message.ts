import type { CallSpec } from '../call/call-spec.js'
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
  return message
}
