import { requestBodyHash } from '../json/hash.js'
import { OMITTED_TOO_LARGE, type Operation, type RecoveryRecord } from '../types.js'

/** Everything known about an undelivered response at the moment it is kept. */
export interface CaptureInput {
  requestId: string
  reason: string
  operation: Operation
  path: string
  model: string
  requestBytes: Buffer
  /** The parsed body when the request path had it; a large body is parsed here, on this rare path, instead. */
  requestValue: Record<string, unknown> | undefined
  status: number
  contentType: string
  responseBytes: Buffer
}

/** Builds the record; the hash is taken here, off the happy path, and always from the whole body. */
export function buildRecord(input: CaptureInput, maxStoredRequestBytes: number): RecoveryRecord {
  const hash = requestBodyHash(input.requestValue ?? input.requestBytes)
  const responseText = input.responseBytes.toString('utf8')
  return {
    request_id: input.requestId,
    created_at: Math.floor(Date.now() / 1000),
    interrupted_reason: input.reason,
    request_body_hash: hash,
    request: {
      body_raw: input.requestBytes.length > maxStoredRequestBytes ? OMITTED_TOO_LARGE : input.requestBytes.toString('utf8'),
      request_body_hash: hash,
      path: input.path,
      endpoint: input.operation,
      model: input.model,
    },
    response: {
      body_raw: responseText,
      // Decoding may replace invalid bytes, so the size is measured on the text that is returned.
      response_body_size: Buffer.byteLength(responseText, 'utf8'),
      status: input.status,
      content_type: input.contentType,
    },
  }
}
