import diagnosticsChannel from 'node:diagnostics_channel'
import type { GatewayLogger, UsageEvent } from '../types.js'
import { type CallEndMessage, gatewayChannels } from './channels.js'

/** Turns one gateway's `call:end` messages into `onUsage` calls; returns the unsubscribe function. */
export function subscribeUsage(gatewayId: string, onUsage: (usage: UsageEvent) => void, logger: GatewayLogger): () => void {
  const listener = (message: unknown) => {
    const end = message as CallEndMessage
    if (end.gatewayId !== gatewayId || end.usage === undefined || end.upstream === undefined) return
    // A subscriber that throws would surface as an uncaught exception: the user's hook is fenced here.
    try {
      onUsage({
        requestId: end.requestId,
        owner: end.owner,
        model: end.model,
        endpoint: end.operation,
        ...end.usage,
        recovered: end.recovered,
        upstream: end.upstream,
        ...(end.keyAlias === undefined ? {} : { keyAlias: end.keyAlias }),
        complete: end.complete !== false,
        ...(end.cost === undefined ? {} : { cost: end.cost }),
        ...(end.cache === 'hit' ? { cached: true as const } : {}),
        ...(end.sessionId === undefined ? {} : { sessionId: end.sessionId }),
      })
    } catch (error) {
      logger.error('model-gateway: onUsage threw', { requestId: end.requestId, error: String(error) })
    }
  }
  diagnosticsChannel.subscribe(gatewayChannels.callEnd, listener)
  return () => {
    diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, listener)
  }
}
