import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Deadline } from './deadlines.js'

/** What a late-reset watch tells: an interrupted outcome when the answer was lost, else undefined. */
export type LateResetListener = (outcome: DeliveryOutcome | undefined) => void

/**
 * The late-reset watch of one connection, made at its first watched answer: its three socket listeners stay for the
 * connection's life and serve every answer on it, rather than three added and removed per answer. It watches one
 * answer at a time, since a response on a connection means its client sent another request, so it read the answer
 * before it; a keep-alive connection taking thousands of small calls within the watch gathers nothing.
 */
class ConnectionWatch {
  private listener: LateResetListener | undefined
  private readBefore = 0
  private disarm: (() => void) | undefined
  /** Made once per connection: a deadline only ever fires for the answer watched, as each watch disarms its own. */
  private readonly expire = () => this.end(undefined)

  constructor(private readonly socket: Socket) {
    socket.on('error', (error: NodeJS.ErrnoException) => this.end(error.code ?? error.message))
    socket.on('end', () => this.end(undefined))
    socket.on('close', (hadError: boolean) => this.end(hadError ? 'ECONNRESET' : undefined))
  }

  /** Watches the answer whose response closed with `readBefore` bytes read; ends the watch of the one before it. */
  watch(readBefore: number, deadline: Deadline, listener: LateResetListener): void {
    // A later response on this connection: its client read the answer before it.
    this.end(undefined)
    this.listener = listener
    this.readBefore = readBefore
    this.disarm = deadline.arm(this.expire)
  }

  /** Ends the watch, if one runs: `code` names a reset, lost when the client sent nothing after the answer. */
  private end(code: string | undefined): void {
    const listener = this.listener
    if (!listener) return
    this.listener = undefined
    this.disarm?.()
    this.disarm = undefined
    const lost = code !== undefined && this.socket.bytesRead === this.readBefore
    listener(lost ? { delivered: false, reason: `write failed: ${code}` } : undefined)
  }
}

/** The late-reset watch of each connection that had a watched answer. */
const connectionWatches = new WeakMap<Socket, ConnectionWatch>()

/** How a response ended: delivered, or interrupted with the reason a recovery record carries. */
export type DeliveryOutcome = { delivered: true } | { delivered: false; reason: string }

/**
 * The one watcher of a response, from the start of its request. The outcome is fixed when the response closes,
 * which it always does, right after `finish` or on an abort: on Node 20/22 `writableFinished` can still flip
 * after an abort, so it is read at that moment and never later. One `close` listener rather than `once` on both
 * events: a listener on a host framework's response object costs more than it looks (see the Express adapter).
 */
export class DeliveryWatch {
  private outcome: DeliveryOutcome | undefined
  private writeError: string | undefined
  private waiters: Array<(outcome: DeliveryOutcome) => void> = []

  /** Held from the start: the server detaches it from `res` once the response finished. */
  private readonly socket: Socket | null

  constructor(private readonly res: ServerResponse) {
    this.socket = res.socket
    res.on('close', () => this.settle(this.closedOutcome()))
  }

  /**
   * Hears the `error` a response emits for a write it could not take, which names the interruption. Only a
   * streamed response needs it: a whole one is written once, never after its end, and checked for a destroyed
   * response first (see `ClientSink.complete`).
   */
  watchWrites(): void {
    this.res.on('error', (error: NodeJS.ErrnoException) => {
      this.writeError ??= error.code ?? error.message
    })
  }

  private closedOutcome(): DeliveryOutcome {
    // `finish` only says the last bytes were handed on: a client that reset while megabytes were still queued makes
    // the socket fail first and the response finish all the same. Such a response was not delivered.
    const failure = this.socket?.errored as NodeJS.ErrnoException | null | undefined
    if (failure) return { delivered: false, reason: `write failed: ${failure.code ?? failure.message}` }
    if (this.res.writableFinished) return { delivered: true }
    return { delivered: false, reason: this.writeError ? `write failed: ${this.writeError}` : 'context canceled' }
  }

  /** The connection's bytes read when the response closed: a reset before the watch began is judged by them. */
  private readAtClose = 0

  private settle(outcome: DeliveryOutcome): void {
    if (this.outcome) return
    this.outcome = outcome
    this.readAtClose = this.socket?.bytesRead ?? 0
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter(outcome)
  }

  /** True once the client is known to be gone without the whole response. */
  get clientGone(): boolean {
    return this.outcome !== undefined && !this.outcome.delivered
  }

  /** Records a failed write (from a write callback), so the outcome names it. */
  noteWriteError(error: { code?: string; message: string } | null | undefined): void {
    if (error) this.writeError ??= error.code ?? error.message
  }

  /**
   * After a response that finished, watches its connection until `deadline`: `finish` only says the last bytes went
   * to the kernel, and a client that read part of them and then reset lost the rest. Resolves with an interrupted
   * outcome when the connection is reset (an error, or a close with one) before the client sent another byte (a
   * next request says it read this answer); undefined on a clean end, a next request, or the deadline.
   */
  lateReset(deadline: Deadline): Promise<DeliveryOutcome | undefined> {
    return new Promise((resolve) => this.onLateReset(deadline, resolve))
  }

  /**
   * `lateReset` with a listener called once instead of a promise: a whole answer's watch costs no promise turns.
   * The listener is called at once when there is nothing to watch; it must not throw (a socket event calls it).
   */
  onLateReset(deadline: Deadline, listener: LateResetListener): void {
    const socket = this.socket
    if (!socket || !this.outcome?.delivered) {
      listener(undefined)
      return
    }
    const readBefore = this.readAtClose
    if (socket.destroyed) {
      // Reset while the answer was being kept (a client whose timeout fired as the answer reached its buffers).
      const failure = socket.errored as NodeJS.ErrnoException | null
      const lost = failure && socket.bytesRead === readBefore
      listener(lost ? { delivered: false, reason: `write failed: ${failure.code ?? failure.message}` } : undefined)
      return
    }
    let watch = connectionWatches.get(socket)
    if (!watch) {
      watch = new ConnectionWatch(socket)
      connectionWatches.set(socket, watch)
    }
    watch.watch(readBefore, deadline, listener)
  }

  /** Resolves when the response has finished or the connection closed. */
  settled(): Promise<DeliveryOutcome> {
    if (this.outcome) return Promise.resolve(this.outcome)
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** Calls `listener` once if the client leaves before the whole response; returns a function that stops watching. */
  onGone(listener: () => void): () => void {
    if (this.outcome) {
      if (!this.outcome.delivered) listener()
      return () => {}
    }
    const waiter = (outcome: DeliveryOutcome) => {
      if (!outcome.delivered) listener()
    }
    this.waiters.push(waiter)
    return () => {
      const { waiters } = this
      // Most often the last one added (a call stops watching before anything else waits): taken off the end.
      if (waiters[waiters.length - 1] === waiter) {
        waiters.pop()
        return
      }
      const i = waiters.indexOf(waiter)
      if (i !== -1) waiters.splice(i, 1)
    }
  }
}
