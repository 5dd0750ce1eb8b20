import type { GatewayStore } from '../store/gateway-store.js'
import { outcomeUnknown } from '../store/guard.js'
import type { GatewayLogger, RecoveryRecord } from '../types.js'
import type { PendingWrites } from './pending.js'

const RETRY_DELAYS_MS = [100, 400, 1600]

/** How `writeRecord` confirms a write whose outcome it could not see. */
export interface WriteOptions {
  /** When to look again for a record whose last write attempt got no answer in time. @default 30000 */
  verifyAfterMs?: number
  /** Where a record the store refused past the retries is held until the store takes writes again. */
  pending?: PendingWrites
  /** Runs when a held record is written after all. */
  onStoredLater?: () => void
}

/**
 * Writes a record, retrying briefly; resolves whether it is known to be stored. A record still refused while the
 * store is down is held in `options.pending`, to be written once it is back; a store back by then gets one more
 * attempt; one refused by a store that answers is logged with its request id. When the last attempt got no answer in
 * time, the write may still land (a frozen store that wakes up): it is held in `options.pending` too and written
 * again (a record's keys are its own, so twice is once); without `pending` it is logged as unconfirmed, then checked
 * again later and logged as what really happened.
 */
export async function writeRecord(
  store: GatewayStore,
  owner: string,
  record: RecoveryRecord,
  ttlMs: number,
  logger: GatewayLogger,
  options: WriteOptions = {},
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await store.put(owner, record, ttlMs)
      return true
    } catch (error) {
      const delay = RETRY_DELAYS_MS[attempt]
      if (delay !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, delay))
        continue
      }
      const meta = { requestId: record.request_id, error: error instanceof Error ? error.message : String(error) }
      if (!outcomeUnknown(error)) {
        // Held only when the store is down: a record a store that answers refuses (too large, no room) stays refused.
        // A store that came back while the last attempt failed (its client still reconnecting) is tried once more
        // first: only a refusal by a store that is up is one.
        if ((await store.healthy()) && (await putOnce(store, owner, record, ttlMs))) return true
        if (options.pending && !(await store.healthy())) options.pending.add(owner, record, ttlMs, options.onStoredLater)
        else logger.error('model-gateway: recovery record could not be stored', meta)
        return false
      }
      // The write may or may not have landed: writing it again is harmless (a record's keys are its own), losing it
      // is not, so it is held and written again while the store takes writes.
      if (options.pending) {
        logger.warn('model-gateway: recovery record write not confirmed (the store did not answer in time); writing it again', meta)
        options.pending.add(owner, record, ttlMs, options.onStoredLater)
        return false
      }
      logger.warn('model-gateway: recovery record write not confirmed (the store did not answer in time); checking again later', meta)
      verifyLater(store, owner, record.request_id, logger, options.verifyAfterMs ?? 30_000)
      return false
    }
  }
}

/** One more write of a record, resolving whether it was stored. */
function putOnce(store: GatewayStore, owner: string, record: RecoveryRecord, ttlMs: number): Promise<boolean> {
  return store.put(owner, record, ttlMs).then(
    () => true,
    () => false,
  )
}

/** Looks for a record once more after `ms` and logs whether it landed after all. */
function verifyLater(store: GatewayStore, owner: string, requestId: string, logger: GatewayLogger, ms: number): void {
  const timer = setTimeout(async () => {
    try {
      if (await store.get(owner, requestId)) logger.warn('model-gateway: recovery record stored after all', { requestId })
      else logger.error('model-gateway: recovery record could not be stored', { requestId })
    } catch (error) {
      logger.error('model-gateway: recovery record could not be confirmed', { requestId, error: String(error) })
    }
  }, ms)
  timer.unref()
}
