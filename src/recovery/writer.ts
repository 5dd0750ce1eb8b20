import type { GatewayLogger, RecoveryRecord } from '../types.js'
import type { RecoveryStore } from './store/recovery-store.js'

const RETRY_DELAYS_MS = [100, 400, 1600]

/** Writes a record, retrying briefly; a record that still cannot be written is logged with its request id. */
export async function writeRecord(
  store: RecoveryStore,
  owner: string,
  record: RecoveryRecord,
  ttlMs: number,
  logger: GatewayLogger,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await store.put(owner, record, ttlMs)
      return true
    } catch (error) {
      const delay = RETRY_DELAYS_MS[attempt]
      if (delay === undefined) {
        logger.error('model-gateway: recovery record could not be stored', {
          requestId: record.request_id,
          error: error instanceof Error ? error.message : String(error),
        })
        return false
      }
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}
