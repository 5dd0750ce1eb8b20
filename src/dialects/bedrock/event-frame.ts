// AWS event-stream frames as Bedrock writes them (`application/vnd.amazon.eventstream`), with their CRCs: what the
// gateway writes to a Bedrock-format client, and what the package's Bedrock mock streams.
// `zlib.crc32` (Node ≥ 20.15, below the package's engines): the frame's CRCs without a JavaScript table.
import { crc32 } from 'node:zlib'
import type { ClientFraming } from '../framing/framing.js'
import { eventFramingWriter, type SseFields } from '../framing/writer.js'

/** The content type of Bedrock's streams. */
export const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream'

/** What one frame is: an event of its `:event-type`, or an exception of its `:exception-type`. */
export type FrameKind = { event: string } | { exception: string }

/** One string header as the event-stream format writes it: name length, name, type 7 (string), value length, value. */
function stringHeader(name: string, value: string): Buffer {
  const nameBytes = Buffer.from(name, 'utf8')
  const valueBytes = Buffer.from(value, 'utf8')
  const out = Buffer.allocUnsafe(1 + nameBytes.length + 3 + valueBytes.length)
  out.writeUInt8(nameBytes.length, 0)
  nameBytes.copy(out, 1)
  out.writeUInt8(7, 1 + nameBytes.length)
  out.writeUInt16BE(valueBytes.length, 2 + nameBytes.length)
  valueBytes.copy(out, 4 + nameBytes.length)
  return out
}

/** The encoded headers of each kind of frame, made once: a stream writes the same few kinds over and over. */
const HEADERS = new Map<string, Buffer>()
/** Kinds are a dialect's few event and exception types; past this many, headers are encoded per frame. */
const MAX_KINDS = 64

function headersOf(kind: FrameKind): Buffer {
  const key = 'event' in kind ? `e${kind.event}` : `x${kind.exception}`
  const known = HEADERS.get(key)
  if (known !== undefined) return known
  const bytes =
    'event' in kind
      ? Buffer.concat([
          stringHeader(':event-type', kind.event),
          stringHeader(':content-type', 'application/json'),
          stringHeader(':message-type', 'event'),
        ])
      : Buffer.concat([
          stringHeader(':exception-type', kind.exception),
          stringHeader(':content-type', 'application/json'),
          stringHeader(':message-type', 'exception'),
        ])
  if (HEADERS.size < MAX_KINDS) HEADERS.set(key, bytes)
  return bytes
}

/**
 * One event-stream frame of `kind` carrying the JSON text `payload`: its prelude (total and headers length, their
 * CRC-32), headers, payload and the message's CRC-32, written into one buffer.
 */
export function eventFrame(kind: FrameKind, payload: string): Buffer {
  const headers = headersOf(kind)
  const payloadLength = Buffer.byteLength(payload, 'utf8')
  const total = 12 + headers.length + payloadLength + 4
  const out = Buffer.allocUnsafe(total)
  out.writeUInt32BE(total, 0)
  out.writeUInt32BE(headers.length, 4)
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8)
  headers.copy(out, 12)
  out.write(payload, 12 + headers.length, 'utf8')
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4)
  return out
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
