// AWS event-stream frames as Bedrock sends them, with correct CRCs (@smithy/eventstream-codec), and the damage the
// mock's controls ask for (an exception mid-stream, a bad CRC, an oversized frame).
import { EVENT_STREAM_TYPE, type FrameKind, eventFrame as frameOf } from '../dialects/bedrock/event-frame.js'
import { type JsonObject, num } from './shared.js'

export { EVENT_STREAM_TYPE }

/** One event-stream frame: an event of `eventType`, or an exception of `exceptionType`, carrying `payload`. */
export function eventFrame(kind: FrameKind, payload: JsonObject): Buffer {
  return frameOf(kind, JSON.stringify(payload))
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
