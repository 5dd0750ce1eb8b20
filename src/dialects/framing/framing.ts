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
  /** Bytes every reader of the framing skips, sent on a quiet stream to keep its connection open. */
  readonly keepAlive: Buffer
}
