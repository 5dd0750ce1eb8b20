import type { ServerResponse } from 'node:http'
import type { Deadline } from './deadlines.js'

/** The code a response cut for a frozen client fails with: its record says `write failed: ETIMEDOUT`. */
export const CLIENT_WRITE_TIMEOUT = 'ETIMEDOUT'

/**
 * Cuts a response whose client takes none of its pending bytes for a whole `deadline` (a frozen client: socket
 * open, nothing read), so it no longer holds the answer in memory; the delivery watch then sees a failed write and
 * the answer is kept as interrupted. Progress is a `drain`: the client took all that waited (a whole answer is
 * written a slice at a time for this, see `ClientSink.complete`), so a slow client that takes a slice in each period
 * is left be. Armed only while bytes wait, so the plain path costs nothing.
 */
export class ClientWrites {
  #disarm: (() => void) | undefined
  #listening = false
  #progressed = false
  readonly #onDrain = () => {
    this.#progressed = true
  }

  constructor(
    private readonly res: ServerResponse,
    private readonly deadline: Deadline,
  ) {}

  /** Bytes wait for the client: starts the watch unless it runs. */
  waiting(): void {
    if (!this.#listening) {
      this.#listening = true
      this.res.on('drain', this.#onDrain)
    }
    if (this.#disarm) return
    this.#progressed = false
    this.#disarm = this.deadline.arm(() => this.#check())
  }

  /** Whether bytes still wait: a stream that asked its producer to wait, or an ended response not yet handed on. */
  #bytesWait(): boolean {
    const res = this.res
    return !res.destroyed && !res.writableFinished && (res.writableNeedDrain || res.writableEnded)
  }

  #check(): void {
    this.#disarm = undefined
    if (!this.#bytesWait()) return
    if (this.#progressed) {
      this.waiting()
      return
    }
    this.res.destroy(Object.assign(new Error('The client took no bytes of the response in time.'), { code: CLIENT_WRITE_TIMEOUT }))
  }
}
