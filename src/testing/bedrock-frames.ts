// AWS event-stream frames as Bedrock sends them, with correct CRCs (@smithy/eventstream-codec), and the damage the
// mock's controls ask for (an exception mid-stream, a bad CRC, an oversized frame).
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { type JsonObject, num } from './shared.js'

/** The content type of Bedrock's streams. */
export const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream'
const codec = new EventStreamCodec(toUtf8, fromUtf8)

const strings = (headers: Record<string, string>): MessageHeaders =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }]))

/** One event-stream frame: an event of `eventType`, or an exception of `exceptionType`, carrying `payload`. */
export function eventFrame(kind: { event: string } | { exception: string }, payload: JsonObject): Buffer {
  const headers: Record<string, string> =
    'event' in kind
      ? { ':event-type': kind.event, ':content-type': 'application/json', ':message-type': 'event' }
      : { ':exception-type': kind.exception, ':content-type': 'application/json', ':message-type': 'exception' }
  return Buffer.from(codec.encode({ headers: strings(headers), body: fromUtf8(JSON.stringify(payload)) }))
}

/**
 * The damage a control asks for, applied to a stream's frames: an exception after the first frames, a frame whose CRC
 * is wrong, a frame announcing more bytes than any reader should hold.
 */
export function damaged(frames: Buffer[], ctl: JsonObject): Buffer[] {
  const out = [...frames]
  if (typeof ctl.stream_exception === 'string') {
    out.splice(2, out.length, eventFrame({ exception: ctl.stream_exception }, { message: `Mock ${ctl.stream_exception} in the stream.` }))
  }
  if (ctl.corrupt_frame === true && out[1] !== undefined) {
    const bad = Buffer.from(out[1])
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 0xff
    out[1] = bad
  }
  const oversized = num(ctl.oversized_frame_bytes)
  if (oversized !== undefined) {
    // A prelude announcing `oversized` bytes, then that many bytes in pieces: a reader must refuse it from the prelude.
    const prelude = Buffer.alloc(12)
    prelude.writeUInt32BE(oversized, 0)
    const piece = Buffer.alloc(1024 * 1024)
    const pieces = [prelude]
    for (let left = oversized - 12; left > 0; left -= piece.length) pieces.push(left >= piece.length ? piece : piece.subarray(0, left))
    out.splice(1, out.length, ...pieces)
  }
  return out
}
