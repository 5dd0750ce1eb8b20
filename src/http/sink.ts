import type { ServerResponse } from 'node:http'
import type { ClientFraming, FramingWriter } from '../dialects/framing/framing.js'
import { DEFAULT_FRAMING } from '../dialects/framing/index.js'
import { endsEvent } from '../sse/write.js'
import { ClientWrites } from './client-writes.js'
import type { Deadline } from './deadlines.js'
import { DeliveryWatch } from './delivery.js'
import type { QuietStream } from './keep-alive.js'

/** Status and headers of a response, as written to a client; the length of a whole body is added by the sink. */
export interface ResponseHead {
  status: number
  headers: Record<string, string | number>
}

/**
 * Where one response goes. A response arrives either whole (`complete`) or as a stream (`open`, `write`…,
 * then `end` or `abort`). The client's socket is one sink; joined retries, journals and usage meters are others.
 */
export interface ResponseSink {
  /** A whole response at once. */
  complete(head: ResponseHead, body: Buffer): void
  /** The head of a streamed response. */
  open(head: ResponseHead): void
  /** One chunk of a streamed body; false asks the producer to wait for the primary sink's drain. */
  write(chunk: Buffer): boolean
  /** The stream ended normally. */
  end(): void
  /** The stream broke off after `open`. */
  abort(error: Error): void
}

const flushHead = (sink: ClientSink) => sink.flushHead()

/** Whole bodies larger than this are written a slice of it at a time (see `ClientSink.complete`). */
const WHOLE_SLICE_BYTES = 1024 * 1024

/** The client's response as a sink, with the one delivery watch of that response. */
export class ClientSink implements ResponseSink, QuietStream {
  /** Whether anything followed `open`: its head went out with it. */
  #wrote = false
  /** How the head went out: by `open`, or by a keep-alive ahead of the upstream's head; undefined before. */
  #opened: 'open' | 'keep-alive' | undefined
  /** The head a keep-alive sends when it comes before the stream's own (`headAhead`). */
  #headAhead: ResponseHead | undefined
  /** The last chunk written: a keep-alive goes only between two events, never inside one. */
  #last: Buffer | undefined
  /** `QuietStream.quietSweeps`: set back to 0 by every write. */
  quietSweeps = 0
  /** Watches the response from the start of the request: a client that leaves at any point is seen. */
  readonly watch: DeliveryWatch
  /** Cuts a frozen client, so it cannot hold an answer indefinitely. */
  readonly #writes: ClientWrites | undefined
  /** Frames the stream's SSE events for a framing other than SSE; made when the stream opens. */
  #writer: FramingWriter | undefined
  /** `sent`. */
  #sent = 0

  /**
   * `writeDeadline`: how long the client may take none of the bytes waiting for it (`timeouts.clientWriteMs`);
   * `framing`: the stream's, whose keep-alive a quiet stream gets.
   */
  constructor(
    private readonly res: ServerResponse,
    writeDeadline?: Deadline,
    private framing: ClientFraming = DEFAULT_FRAMING,
  ) {
    this.watch = new DeliveryWatch(res)
    this.#writes = writeDeadline && new ClientWrites(res, writeDeadline)
  }

  complete(head: ResponseHead, body: Buffer): void {
    if (!this.#headOfWhole(head)) return
    if (body.length <= WHOLE_SLICE_BYTES || !this.#writes) {
      this.res.end(body)
      return
    }
    // What `end(body)` would have added: without it the slices would go out chunked.
    if (!this.res.hasHeader('content-length')) this.res.setHeader('content-length', body.length)
    // Slices are views of the body, never copies.
    this.#endInSlices(body.length, (at) => {
      const end = Math.min(body.length, at + WHOLE_SLICE_BYTES)
      return [body.subarray(at, end), end]
    })
  }

  /**
   * `complete` with a body given as text, each slice encoded as it goes out: Node copies a string body whole, with
   * its head, into three buffers of its size (30 MB for the 10 MB object of a background create).
   */
  completeText(head: ResponseHead, text: string): void {
    if (!this.#headOfWhole(head)) return
    this.res.setHeader('content-length', Buffer.byteLength(text))
    this.#endInSlices(text.length, (at) => {
      let end = Math.min(text.length, at + WHOLE_SLICE_BYTES)
      // Never between the two halves of a surrogate pair, which encode differently alone.
      const last = text.charCodeAt(end - 1)
      if (end < text.length && end - 1 > at && last >= 0xd800 && last <= 0xdbff) end--
      return [Buffer.from(text.slice(at, end), 'utf8'), end]
    })
  }

  /** Sets the head of a whole body; false when there is no client to write it to. */
  #headOfWhole(head: ResponseHead): boolean {
    if (this.watch.clientGone) return false
    if (this.res.destroyed) {
      // What `end` would report through its callback; the watch settles on the `close` that follows.
      this.watch.noteWriteError({ code: 'ERR_STREAM_DESTROYED', message: 'The response was destroyed.' })
      return false
    }
    // Headers through `setHeader` and no `writeHead`: a host (Express's `X-Powered-By`) has often set one already,
    // and `writeHead` would then pass each of its own through `setHeader` anyway; `end` adds the length of the
    // body it is given. No `end` callback: it would only add a `finish` listener to hear of a write to a destroyed
    // response, which is checked above.
    const res = this.res
    res.statusCode = head.status
    for (const name in head.headers) res.setHeader(name, head.headers[name] as string | number)
    return true
  }

  /**
   * Writes a large whole body a slice at a time (`slice` gives the one at `at`, and where the next starts), each
   * after the last drained: the drains are what tells a slow client from a frozen one (`timeouts.clientWriteMs`).
   */
  #endInSlices(size: number, slice: (at: number) => [Buffer, number]): void {
    const res = this.res
    const writes = this.#writes
    let at = 0
    const next = (): void => {
      while (at < size) {
        if (res.destroyed) return
        const [bytes, end] = slice(at)
        const taken = res.write(bytes)
        at = end
        if (!taken && at < size) {
          writes?.waiting()
          res.once('drain', next)
          return
        }
      }
      res.end()
      if (!res.writableFinished) writes?.waiting()
    }
    next()
  }

  /** Sets the framing of a stream not yet opened whose framing was not known when the sink was made (a resume's). */
  frameAs(framing: ClientFraming): void {
    if (this.#opened === undefined) this.framing = framing
  }

  open(head: ResponseHead): void {
    // A keep-alive sent the head already: the status and headers the client got stand.
    if (this.#opened) return
    this.#opened = 'open'
    this.#writer = this.framing.writer?.()
    this.watch.watchWrites()
    this.res.writeHead(head.status, head.headers)
    // The head goes out with the first chunk when that chunk is already here (it mostly comes in the same read as
    // the upstream's head): one write before the first token instead of two. A first chunk still on its way (a
    // model thinking) must not hold the head back, so after this turn it goes out alone.
    setImmediate(flushHead, this)
  }

  write(sseBytes: Buffer): boolean {
    this.#wrote = true
    this.quietSweeps = 0
    const chunk = this.#writer ? this.#writer.write(sseBytes) : sseBytes
    if (chunk.length > 0) this.#last = chunk
    else if (this.#writer) return true
    // A client that left no longer sets the pace: a stream others joined goes on for them.
    if (this.watch.clientGone) return true
    this.#sent += chunk.length
    if (this.res.write(chunk)) return true
    this.#writes?.waiting()
    return false
  }

  end(): void {
    this.#wrote = true
    const rest = this.#writer?.end()
    if (rest !== undefined && rest.length > 0 && !this.watch.clientGone) {
      this.#sent += rest.length
      this.res.end(rest)
    } else this.res.end()
  }

  abort(): void {
    this.#wrote = true
    // Headers are out: the only honest signal left for a broken stream is a cut connection.
    this.res.destroy()
  }

  /**
   * The head a keep-alive sends while the stream waits for its upstream's: from then on the stream is committed to
   * it, and an upstream error can only be the stream's last event (`openedEarly`).
   */
  headAhead(head: ResponseHead): void {
    this.#headAhead = head
  }

  /** Whether a keep-alive sent the head before the stream opened. */
  get openedEarly(): boolean {
    return this.#opened === 'keep-alive'
  }

  keepAlive(): void {
    if (this.watch.clientGone || this.res.destroyed || this.res.writableEnded) return
    if (this.#opened === undefined) {
      if (!this.#headAhead) return
      this.open(this.#headAhead)
      this.#opened = 'keep-alive'
    } else if (this.#last && !this.#writer && !endsEvent(this.#last)) return
    // A client that does not read gets nothing more queued: its bytes are still on their way.
    const keepAlive = this.framing.keepAlive
    if (this.res.writableNeedDrain || keepAlive === undefined) return
    // Bytes of the framing itself: never through its writer.
    this.#wrote = true
    this.quietSweeps = 0
    this.#last = keepAlive
    if (!this.res.write(keepAlive)) this.#writes?.waiting()
  }

  /** The bytes of a stream's events handed to the response so far (its keep-alives and head aside). */
  get sent(): number {
    return this.#sent
  }

  /** The bytes written that the client has not taken yet. */
  get backlog(): number {
    return this.res.writableLength
  }

  /** Cuts the connection of a client that does not read: what it missed, it resumes. */
  cut(): void {
    this.res.destroy()
  }

  /** Sends an opened stream's head if nothing was written after it in the turn that opened it. */
  flushHead(): void {
    if (!this.#wrote && !this.res.destroyed) this.res.flushHeaders()
  }

  /** Calls `listener` each time the client's socket can take more; returns a function that stops it. */
  onDrain(listener: () => void): () => void {
    this.res.on('drain', listener)
    return () => this.res.off('drain', listener)
  }
}
