import { channels } from '../observe/channels.js'
import { bodyHash } from '../recovery/body-hash.js'
import { buildRecord } from '../recovery/record.js'
import { writeRecord } from '../recovery/writer.js'
import type { Runtime } from '../runtime.js'
import type { CallSpec } from './call-spec.js'

/** An undelivered 2xx response, as the call saw it. */
export interface UndeliveredResponse {
  /** The record's `interrupted_reason`. */
  reason: string
  status: number
  contentType: string
  body: Buffer
}

/** Keeps an undelivered response as a recovery record; resolves whether it was stored. */
export async function keepRecord(rt: Runtime, spec: CallSpec, response: UndeliveredResponse): Promise<boolean> {
  const { recovery, logger } = rt.options
  let requestHash: string
  try {
    requestHash = await bodyHash(spec.body)
  } catch (error) {
    logger.error('model-gateway: recovery record could not be stored', { requestId: spec.requestId, error: String(error) })
    return false
  }
  const record = buildRecord(
    {
      requestId: spec.requestId,
      reason: response.reason,
      operation: spec.operation,
      path: spec.path,
      model: spec.model.id,
      requestBytes: spec.body.bytes,
      // Taken here, off the happy path, and always from the whole body.
      requestHash,
      status: response.status,
      contentType: response.contentType,
      responseBytes: response.body,
    },
    recovery.maxStoredRequestBytes,
  )
  const stored = await writeRecord(rt.store, spec.owner, record, recovery.ttlMs, logger)
  if (stored && channels.recordStored.hasSubscribers) {
    channels.recordStored.publish({
      gatewayId: rt.id,
      requestId: spec.requestId,
      owner: spec.owner,
      operation: spec.operation,
      model: spec.model.id,
      reason: response.reason,
    })
  }
  return stored
}
