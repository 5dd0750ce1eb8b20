/** A stream the sweeper keeps alive: the client's response of a streamed call or of a resume. */
export interface QuietStream {
  /** Sweeps since its client last got a byte: every write sets it back to 0. */
  quietSweeps: number
  /** Sends the keep-alive comment, or nothing where none may go now (a client gone, a cut inside an event). */
  keepAlive(): void
}

/** Sweeps per interval: a stream gets its comment after between 1 and 1.25 intervals of quiet. */
const SWEEPS_PER_INTERVAL = 4

/**
 * One timer for every stream of a gateway, instead of one per stream: holding a stream is a Set insertion, and a
 * write costs the stream one field store (no clock read). The timer runs only while a stream is held and never keeps
 * the process up. Each sweep counts every held stream one sweep quieter; a stream quiet for more than a whole
 * interval of sweeps gets the comment.
 */
export class KeepAliveSweeper {
  readonly #streams = new Set<QuietStream>()
  readonly #tickMs: number
  #timer: NodeJS.Timeout | undefined

  constructor(streamMs: number) {
    this.#tickMs = Math.max(1, Math.ceil(streamMs / SWEEPS_PER_INTERVAL))
  }

  /** How many streams are held now. */
  get size(): number {
    return this.#streams.size
  }

  /** Keeps `stream` alive until the returned function is called. */
  hold(stream: QuietStream): () => void {
    stream.quietSweeps = 0
    this.#streams.add(stream)
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#sweep(), this.#tickMs)
      this.#timer.unref()
    }
    return () => this.#release(stream)
  }

  #release(stream: QuietStream): void {
    this.#streams.delete(stream)
    if (this.#streams.size === 0 && this.#timer) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  #sweep(): void {
    for (const stream of this.#streams) {
      if (++stream.quietSweeps > SWEEPS_PER_INTERVAL) stream.keepAlive()
    }
  }
}
