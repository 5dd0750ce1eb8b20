/**
 * The writer side of a stream framing (a codec: `sse`; later others), chosen per operation: what a client's stream of
 * it is sent with. The gateway keeps, journals and resumes events, whatever the framing.
 */
export interface ClientFraming {
  /** The framing's name (`sse`). */
  readonly name: string
  /** The `content-type` of a stream in this framing. */
  readonly contentType: string
  /** The head of a stream in this framing, besides status and request id: its content type, and no caching or buffering on the way. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * Bytes every reader of the framing skips, sent on a quiet stream to keep its connection open; undefined for a
   * framing none of whose clients skips anything (a quiet stream then gets nothing).
   */
  readonly keepAlive: Buffer | undefined
  /**
   * A fresh writer of one stream in this framing, for a framing other than SSE: the gateway keeps, journals and
   * resumes a stream's SSE events, and the writer turns them into the framing's bytes on their way to the client.
   * @default the SSE bytes as they are
   */
  writer?(): FramingWriter
}

/** Turns one stream's SSE bytes, in chunks that may end inside an event, into a framing's own. */
export interface FramingWriter {
  /** The framed bytes of the events `chunk` completes (empty while an event is still unfinished). */
  write(chunk: Buffer): Buffer
  /** The framed bytes of an event the stream ended without closing, if any. */
  end(): Buffer
}
