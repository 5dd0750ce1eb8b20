import { clientFraming } from '../dialects/framing/index.js'
import { assembledAnswerInSlices } from '../dialects/index.js'
import { textInSlices } from '../http/join-chunks.js'
import { jsonTextInSlices, type SizedText } from '../json/text-in-slices.js'
import { channels } from '../observe/channels.js'
import { buildRecord } from '../recovery/record.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import { writeRecord } from '../recovery/writer.js'
import type { Runtime } from '../runtime.js'
import { eventDataInSlices } from '../sse/parse.js'
import type { CallPlan } from '../translate/index.js'
import type { CallSpec } from './call-spec.js'

/** An undelivered 2xx response, as the call saw it. */
export interface UndeliveredResponse {
  /** The record's `interrupted_reason`. */
  reason: string
  status: number
  contentType: string
  /** As received, or as text built a slice at a time with its size in bytes (a kept stream's). */
  body: Buffer | SizedText
  /** A stream's events as relayed; `body` is then the stream assembled into a whole answer. */
  streamRaw?: string
}

/** The bytes of each event a log kept, one at a time (views of its pages). */
function* eventBytes(log: StreamLog): Generator<Buffer> {
  for (const event of log.events()) yield event.bytes
}

/** Keeps an undelivered response as a recovery record; resolves whether it was stored. */
export async function keepRecord(rt: Runtime, spec: CallSpec, response: UndeliveredResponse): Promise<boolean> {
  const { recovery, logger } = rt.options
  let requestHash: string
  try {
    requestHash = await spec.requestHash()
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
      streamRaw: response.streamRaw,
    },
    recovery.maxStoredRequestBytes,
  )
  const published = () => {
    if (!channels.recordStored.hasSubscribers) return
    channels.recordStored.publish({
      gatewayId: rt.id,
      requestId: spec.requestId,
      owner: spec.owner,
      operation: spec.operation,
      model: spec.model.id,
      reason: response.reason,
    })
  }
  // A record the store refuses is held and written when it is back: `record:stored` is published then.
  const stored = await writeRecord(rt.store, spec.owner, record, recovery.ttlMs, logger, {
    pending: rt.pendingWrites,
    onStoredLater: published,
  })
  if (stored) published()
  return stored
}

/** The plan a stream of the client's own format is assembled with (a translated one has one already). */
function planOf(spec: CallSpec, translated: CallPlan | undefined): CallPlan {
  if (translated) return translated
  return {
    model: spec.model.id,
    upstreamModel: spec.model.upstreamModel,
    stream: true,
    includeUsage: true,
    requestId: spec.requestId,
    created: Math.floor(Date.now() / 1000),
    request: {},
  }
}

/**
 * Keeps an undelivered stream as a recovery record: `stream_raw` as relayed, `body_raw` the stream assembled into
 * the non-streaming answer of the client's format (or, failing that, the stream itself). `plan` is the one the
 * stream was translated with, when the model that answered speaks another format.
 */
export async function keepStream(
  rt: Runtime,
  spec: CallSpec,
  plan: CallPlan | undefined,
  log: StreamLog,
  { reason, status }: { reason: string; status: number },
): Promise<boolean> {
  // A slice at a time, with turns of the event loop between: a kept stream can be tens of megabytes. Each text is
  // built once, as text: no joined buffer, no encoding to bytes and back.
  const relayed = await textInSlices(log.chunks())
  let body: SizedText = relayed
  let contentType = clientFraming(spec.format).contentType
  try {
    const answer = await assembledAnswerInSlices(spec.operation, await eventDataInSlices(eventBytes(log)), planOf(spec, plan))
    const text = answer === undefined ? undefined : await jsonTextInSlices(answer)
    if (text) {
      body = text
      contentType = 'application/json'
    }
  } catch {
    // Kept as the stream itself.
  }
  return keepRecord(rt, spec, { reason, status, contentType, body, streamRaw: relayed.text })
}
