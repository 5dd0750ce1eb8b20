import type { ClientSink } from '../http/sink.js'
import type { Runtime } from '../runtime.js'

/**
 * Once a repeat of a call (a replay, a join, a followed stream) has delivered the call's answer to its client, notes
 * it on the call's recovery record (`served_again_at`), so a team reconciling its lost answers does not count that one:
 * the answer reached a client after all. The record may not exist (the first client got the answer) or not yet (the
 * call still runs); the note waits for it all the same. Best effort, never awaited by the call: a failure is logged.
 */
export function noteServedAgain(rt: Runtime, owner: string, requestId: string, client: ClientSink): void {
  client.watch
    .settled()
    .then(async (outcome) => {
      if (!outcome.delivered) return
      await rt.store.markServedAgain(owner, requestId, Math.floor(Date.now() / 1000), rt.options.recovery.ttlMs)
    })
    .catch((error: unknown) => {
      rt.options.logger.warn('model-gateway: could not note on a recovery record that its answer was served again', {
        requestId,
        error: String(error),
      })
    })
}
