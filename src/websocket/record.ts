// A response whose socket went before its last frame was written is an answer its client did not get, as an HTTP
// stream cut mid-way is: once it ended it is kept as a recovery record (listed by `GET /v1/recoveries`, found by a
// lookup with the frame the client sent, replayed by `/v1/recoveries/{request_id}/stream`). Its request id is its
// response id without `resp_`.
import type { CallSpec } from '../call/call-spec.js'
import { keepRecord } from '../call/keep-record.js'
import { bodyHash } from '../recovery/body-hash.js'
import type { Runtime } from '../runtime.js'
import { eventData } from '../sse/parse.js'
import { sseEvent } from '../sse/write.js'

/** Events re-framed between two turns of the event loop: a long answer has tens of thousands. */
const SLICE_EVENTS = 2000

/** The `event:` name of one kept event. */
const eventName = (sse: string) => /^event: ([^\n]*)\n/.exec(sse)?.[1]

/** A cut response as the socket would have sent it. */
export interface CutResponse {
  /** The frame that asked for it: its bytes and parsed value (the body a lookup hashes). */
  frame: { bytes: Buffer; value: Record<string, unknown> }
  /** Its kept events (server-sent events). */
  events: readonly string[]
  /** One event's data as the socket sends it. */
  frameOf: (data: string) => string
  /** Its final object as the socket shows it. */
  object: Record<string, unknown>
  /** The record's `interrupted_reason`. */
  reason: string
}

/** Keeps a response its socket did not take to its end as a recovery record; resolves whether it was stored. */
export async function keepCutResponse(rt: Runtime, spec: CallSpec, cut: CutResponse): Promise<boolean> {
  const parts: string[] = []
  for (const [i, sse] of cut.events.entries()) {
    if (i > 0 && i % SLICE_EVENTS === 0) await new Promise(setImmediate)
    const name = eventName(sse)
    for (const data of eventData(sse)) parts.push(sseEvent(cut.frameOf(data), name))
  }
  const frame = { bytes: cut.frame.bytes, fields: cut.frame.value, value: cut.frame.value, spans: undefined }
  let hashing: Promise<string> | undefined
  // The record is of what the client sent (the frame), not of the body the gateway sent upstream (its carried items).
  const asSent: CallSpec = { ...spec, body: frame, requestHash: () => (hashing ??= bodyHash(frame, spec.owner)) }
  return keepRecord(rt, asSent, {
    reason: cut.reason,
    status: 200,
    contentType: 'application/json',
    body: Buffer.from(JSON.stringify(cut.object), 'utf8'),
    streamRaw: parts.join(''),
  })
}
