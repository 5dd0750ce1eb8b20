// AWS event-stream frames as Bedrock writes them (`application/vnd.amazon.eventstream`), with their CRCs: what the
// gateway writes to a Bedrock-format client, and what the package's Bedrock mock streams.
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import type { ClientFraming } from '../framing/framing.js'
import { eventFramingWriter, type SseFields } from '../framing/writer.js'

/** The content type of Bedrock's streams. */
export const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** What one frame is: an event of its `:event-type`, or an exception of its `:exception-type`. */
export type FrameKind = { event: string } | { exception: string }

const strings = (headers: Record<string, string>): MessageHeaders =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }]))

/** One event-stream frame of `kind` carrying the JSON text `payload`. */
export function eventFrame(kind: FrameKind, payload: string): Buffer {
  const headers: Record<string, string> =
    'event' in kind
      ? { ':event-type': kind.event, ':content-type': 'application/json', ':message-type': 'event' }
      : { ':exception-type': kind.exception, ':content-type': 'application/json', ':message-type': 'exception' }
  return Buffer.from(codec.encode({ headers: strings(headers), body: fromUtf8(payload) }))
}

/**
 * The framing of a Bedrock-format client's streams: each SSE event the gateway keeps becomes the frame `frame` makes
 * of it (undefined drops it). No keep-alive: an event-stream reader has no frame it skips (the AWS SDK yields an
 * unknown event type to the caller, and Anthropic's Bedrock client raises on one), so a quiet stream stays quiet.
 */
export function eventStreamClientFraming(frame: (fields: SseFields) => { kind: FrameKind; payload: string } | undefined): ClientFraming {
  const empty = Buffer.alloc(0)
  return {
    name: 'aws-event-stream',
    contentType: EVENT_STREAM_TYPE,
    headers: { 'content-type': EVENT_STREAM_TYPE, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
    keepAlive: undefined,
    writer: () =>
      eventFramingWriter((fields) => {
        const out = frame(fields)
        return out === undefined ? empty : eventFrame(out.kind, out.payload)
      }),
  }
}
