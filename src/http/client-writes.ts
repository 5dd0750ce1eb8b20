import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Deadline } from './deadlines.js'

/** The code a response cut for a frozen client fails with: its record says `write failed: ETIMEDOUT`. */
export const CLIENT_WRITE_TIMEOUT = 'ETIMEDOUT'

/**
 * The bytes a response still has to hand on, measured two ways, because Node counts a chunk being written whole in
 * `writableLength` until the last of it left: the libuv queue shrinks as the kernel takes part of that chunk.
 */
interface Backlog {
  buffered: number
  queued: number
}

/** The libuv write queue of a plain TCP socket (not on every kind of socket: undefined there). */
const queuedOf = (socket: Socket | null): number =>
  (socket as unknown as { _handle?: { writeQueueSize?: number } } | null)?._handle?.writeQueueSize ?? 0

/**
 * Cuts a response whose client takes none of its pending bytes for a whole `deadline` (a frozen client: socket
 * open, nothing read), so it no longer holds the answer in memory; the delivery watch then sees a failed write and
 * the answer is kept as interrupted. A client that takes some bytes in each period is slow, not frozen: it is left be.
 * Armed only while bytes wait (a write refused, or a whole answer not yet handed on), so the plain path costs nothing.
 */
export class ClientWrites {
  #disarm: (() => void) | undefined
  #mark: Backlog = { buffered: 0, queued: 0 }

  constructor(
    private readonly res: ServerResponse,
    private readonly deadline: Deadline,
  ) {}

  /** Bytes wait for the client: starts the watch unless it runs. */
  waiting(): void {
    if (this.#disarm) return
    this.#mark = this.#backlog()
    this.#disarm = this.deadline.arm(() => this.#check())
  }

  #backlog(): Backlog {
    return { buffered: this.res.writableLength, queued: queuedOf(this.res.socket) }
  }

  /** Whether bytes still wait: a whole answer not handed on yet, or a stream that asked its producer to wait. */
  #stillWaiting(): boolean {
    const res = this.res
    if (res.destroyed || res.writableFinished) return false
    return res.writableEnded || res.writableNeedDrain
  }

  #check(): void {
    this.#disarm = undefined
    if (!this.#stillWaiting()) return
    const now = this.#backlog()
    if (now.buffered < this.#mark.buffered || now.queued < this.#mark.queued) {
      this.waiting()
      return
    }
    this.res.destroy(Object.assign(new Error('The client took no bytes of the response in time.'), { code: CLIENT_WRITE_TIMEOUT }))
  }
}
