import type { ClientSink } from '../http/sink.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import type { Runtime } from '../runtime.js'
import type { CallPlan } from '../translate/index.js'
import type { CallSpec } from './call-spec.js'
import { keepStream } from './keep-record.js'

/**
 * Answers from this size on are `unconfirmed` once handed on: a reading client takes a smaller one in one read, where
 * a larger one can sit in its socket buffer unread past the late-reset watch (`timeouts.lateResetMs`). A stream is
 * judged by the bytes it wrote: the gateway cannot see how much of them still sits in the sockets' buffers.
 */
export const LATE_RESET_FROM_BYTES = 64 * 1024

/**
 * Whether a finished stream's log may be held through the watch: only while the streams' logs hold less than half
 * of `recovery.maxHeldStreamBytes`, so a running stream's log, which can still be resumed, never runs out of room
 * for finished ones that are only waiting to be seen read.
 */
const mayHold = (rt: Runtime) => rt.heldStreams.held <= rt.heldStreams.total / 2

/**
 * Watches the connection of a resumable stream that looked delivered (Node reported its last frames handed on) for
 * a reset before the client sends anything more, within `timeouts.lateResetMs`, one watch per connection: a client
 * whose own timeout fired as the last frames reached its buffers resets without reading them. Such a stream is kept
 * as a cut stream is. Takes the log over and releases it when the watch ends; false when it was not taken (the held
 * streams are near their bound), the caller then releases it. Never rejects.
 */
export function watchStreamEnd(
  rt: Runtime,
  spec: CallSpec,
  client: ClientSink,
  log: StreamLog,
  kept: { plan: CallPlan | undefined; status: number },
): boolean {
  if (!mayHold(rt)) return false
  client.watch
    .lateReset(rt.clientDeadlines.lateReset)
    .then((late) => {
      if (!late || late.delivered) return
      rt.options.logger.info?.('model-gateway: client reset the connection after the stream was handed on; it will be kept', {
        requestId: spec.requestId,
      })
      return keepStream(rt, spec, kept.plan, log, { reason: late.reason, status: kept.status })
    })
    .catch((error: unknown) =>
      rt.options.logger.error('model-gateway: recovery record could not be stored', { requestId: spec.requestId, error: String(error) }),
    )
    .finally(() => log.release())
  return true
}
