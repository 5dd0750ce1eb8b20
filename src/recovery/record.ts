import type { SizedText } from '../json/text-in-slices.js'
import { OMITTED_TOO_LARGE, type Operation, type RecoveryRecord } from '../types.js'

/** Everything known about an undelivered response at the moment it is kept. */
export interface CaptureInput {
  requestId: string
  reason: string
  operation: Operation
  path: string
  model: string
  requestBytes: Buffer
  /** The request_body_hash, always of the whole body (see body-hash.ts: large bodies are hashed off the loop). */
  requestHash: string
  status: number
  contentType: string
  /** The response body as received, or as text already decoded with its size in bytes (a kept stream's, built in slices). */
  responseBytes: Buffer | SizedText
  /** A streamed response's events as relayed, when the response was a stream. */
  streamRaw?: string
}

/** Builds the record of an undelivered response. */
export function buildRecord(input: CaptureInput, maxStoredRequestBytes: number): RecoveryRecord {
  const hash = input.requestHash
  const response = input.responseBytes
  const responseText = Buffer.isBuffer(response) ? response.toString('utf8') : response.text
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
      response_body_size: Buffer.isBuffer(response) ? Buffer.byteLength(responseText, 'utf8') : response.bytes,
      status: input.status,
      content_type: input.contentType,
      ...(input.streamRaw === undefined ? {} : { stream_raw: input.streamRaw }),
    },
  }
}
