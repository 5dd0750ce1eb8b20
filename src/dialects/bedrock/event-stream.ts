// AWS event streams (`application/vnd.amazon.eventstream`) read into the SSE events the gateway relays and keeps:
// each binary frame checked (its length against a bound before it is held, its CRCs by @smithy/eventstream-codec)
// and handed to the operation's own writer of SSE.
import { Readable } from 'node:stream'
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { GatewayError } from '../../errors.js'
import type { FramingReader } from '../../upstream/authorize.js'
import type { UpstreamOptionValues } from '../dialect.js'
import { DEFAULT_MAX_FRAME_BYTES } from './options.js'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** A frame's prelude: its total length, its headers' length and the prelude's CRC, 4 bytes each. */
const PRELUDE_BYTES = 12

/** One decoded frame: its `:message-type`, its `:event-type` or `:exception-type`, and its payload as text. */
export interface EventFrame {
  messageType: string
  /** `:event-type` of an event (`chunk`, `messageStart`…), `:exception-type` or `:error-code` of an exception or error. */
  type: string
  payload: string
}

/** Writes one decoded frame as SSE text (one or more events with their blank lines), or '' to drop it. */
export type FrameWriter = (frame: EventFrame) => string

const headerText = (message: Message, name: string): string => {
  const header = message.headers[name]
  return header !== undefined && typeof header.value === 'string' ? header.value : ''
}

/** The frame of a decoded message, its type read from the header its message type names it in. */
function frameOf(message: Message): EventFrame {
  const messageType = headerText(message, ':message-type')
  const name = messageType === 'exception' ? ':exception-type' : messageType === 'error' ? ':error-code' : ':event-type'
  const payload = messageType === 'error' ? JSON.stringify({ message: headerText(message, ':error-message') }) : toUtf8(message.body)
  return { messageType, type: headerText(message, name), payload }
}

/** The stream-broken error of a frame that cannot be read: the relay ends the client's stream with it. */
function broken(message: string): GatewayError {
  return new GatewayError('upstream_stream_broken', message)
}

/**
 * Reads an event stream's bytes into SSE text: frames are held only until whole, and a frame announcing more than
 * `maxFrameBytes` (or a damaged one) throws before any more of it is held.
 */
export class EventStreamDecoder {
  private held: Buffer = Buffer.alloc(0)
  /** Why the stream cannot be read on, once a frame could not be; nothing more is decoded after it. */
  failure: GatewayError | undefined

  constructor(
    private readonly write: FrameWriter,
    private readonly maxFrameBytes: number,
  ) {}

  /**
   * The SSE text of the frames `chunk` completes ('' while a frame is still partial). A frame that cannot be read sets
   * `failure`, and the text of the frames before it is still returned: what came whole is relayed, nothing after it.
   */
  push(chunk: Buffer): string {
    let held = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk])
    let out = ''
    try {
      while (held.length >= PRELUDE_BYTES) {
        const length = held.readUInt32BE(0)
        if (length > this.maxFrameBytes) {
          throw broken(
            `The upstream sent an event-stream frame of ${length} bytes, over the limit of ${this.maxFrameBytes} (maxFrameBytes).`,
          )
        }
        if (length < PRELUDE_BYTES + 4) throw broken('The upstream sent an event-stream frame shorter than its prelude.')
        if (held.length < length) break
        let message: Message
        try {
          message = codec.decode(held.subarray(0, length))
        } catch (error) {
          // A checksum that does not match: the bytes were damaged on their way, and nothing after them can be trusted.
          throw broken(`The upstream sent a damaged event-stream frame (${(error as Error).message}).`)
        }
        held = held.subarray(length)
        out += this.write(frameOf(message))
      }
    } catch (error) {
      this.failure = error as GatewayError
      held = Buffer.alloc(0)
    }
    this.held = held
    return out
  }

  /** Checks the stream ended between frames. */
  end(): void {
    if (this.held.length > 0) throw broken('The upstream event stream ended inside a frame.')
  }
}

/**
 * The framing reader of an upstream whose streams are event streams, bounded by the upstream's `maxFrameBytes`. The
 * body is read only as the SSE side is, so a bad frame fails the reader once it listens (never before, unheard), and
 * the reader's end (a client gone) stops the upstream body.
 */
export function eventStreamFraming(write: FrameWriter, options: UpstreamOptionValues): FramingReader {
  const max = Number(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)
  return (body: Readable) => {
    const decoder = new EventStreamDecoder(write, max)
    // A failure waits until what was decoded before it is read: destroying the reader would drop it.
    let pending: Error | undefined
    const out = new Readable({
      read: () => {
        if (pending === undefined) body.resume()
        else if (out.readableLength === 0) out.destroy(pending)
      },
      destroy: (error, callback) => {
        body.destroy(error ?? undefined)
        callback(error)
      },
    })
    const fail = (error: Error) => {
      body.off('data', onData)
      body.pause()
      if (out.readableLength === 0) out.destroy(error)
      else pending = error
    }
    const onData = (chunk: Buffer) => {
      const text = decoder.push(chunk)
      const more = text === '' || out.push(text)
      if (decoder.failure !== undefined) fail(decoder.failure)
      else if (!more) body.pause()
    }
    body.on('data', onData)
    body.pause()
    body.once('end', () => {
      try {
        decoder.end()
        out.push(null)
      } catch (error) {
        fail(error as Error)
      }
    })
    body.once('error', fail)
    return out
  }
}
