import { StreamLog } from '../recovery/stream/stream-log.js'
import type { Runtime } from '../runtime.js'
import type { CallSpec } from './call-spec.js'

/**
 * The most one resumable stream's log may hold. Its record holds the stream and the answer assembled from it, so in
 * the default in-memory store a log past half an owner's quota (or half the store) could never be kept: the owner's
 * quota is checked here, before the bytes are held, not when the record is refused after the tokens were paid.
 */
export function streamLogLimit(rt: Runtime): number {
  const { limits, recovery, store } = rt.options
  if (store !== undefined) return limits.maxResponseBytes
  return Math.min(limits.maxResponseBytes, Math.floor(Math.min(recovery.maxBytesPerOwner, recovery.maxMemoryBytes) / 2))
}

/** A resumable stream's log, bounded by `streamLogLimit` and by the gateway's total of held stream bytes. */
export function boundedStreamLog(rt: Runtime, spec: CallSpec): StreamLog {
  return new StreamLog((event, id) => spec.inbound.numberedEvent(event, id), streamLogLimit(rt), rt.heldStreams)
}

/**
 * Says why a stream whose client left is stopped rather than finished: it outgrew what the gateway holds for one
 * stream or for all, so it could be neither resumed nor kept, and finishing it would only pay for tokens nobody gets.
 */
export function reportUnkeepable(rt: Runtime, spec: CallSpec): void {
  rt.options.logger.warn('model-gateway: a stream whose client left is too large to keep; it is stopped and not kept', {
    requestId: spec.requestId,
    maxStreamBytes: streamLogLimit(rt),
    maxHeldStreamBytes: rt.heldStreams.total,
  })
}
