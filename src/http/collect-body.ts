import type { Readable } from 'node:stream'
import type { Deadline } from './deadlines.js'
import { joinedNow, joinInSlices } from './join-chunks.js'

/** How `collectBody` reads one body. */
export interface CollectOptions {
  /** Largest body accepted, in bytes. */
  limit: number
  /**
   * The declared length, when known: a body of at most `PREALLOCATE_BYTES` is copied into one buffer of that size as
   * it arrives, with no chunk list beside it; a larger one is kept as its chunks (never allocated from the
   * declaration alone) and joined at its end.
   */
  expectedBytes?: number
  /** What happens to the stream past the limit: drained (a client can still read a 413), or destroyed. */
  afterOverflow: 'drain' | 'destroy'
  /** The error for a body over the limit. */
  tooLarge: () => Error
  /** The error for a stream that broke off or failed before its end. */
  broken: (cause: unknown) => Error
  /** When the whole body must have arrived, and the error past it (the stream is then left alone, paused). */
  deadline?: { at: Deadline; error: () => Error }
  /**
   * Counts the memory a body takes as it takes it: the buffer of a small declared length when it is made at the first
   * chunk, every other byte as it arrives. A declaration alone holds nothing, so idle connections that only declare
   * large bodies cannot fill the budget. Past it, `overBudget` (the stream is drained).
   */
  budget?: { grow(bytes: number): boolean }
  /** The error for a chunk the budget refused. */
  overBudget?: () => Error
  /**
   * The stream is a `node:http` request, which emits `error` only to listeners and always closes after an error:
   * its error is read at `close` (from `errored`) instead of through one more listener, which costs most on a host
   * framework's request object. @default false
   */
  errorAtClose?: boolean
}

/** The most allocated up front from a declared length; a bigger body's memory grows with what actually arrives. */
export const PREALLOCATE_BYTES = 1024 * 1024

/**
 * Reads a whole body, request or upstream, within a byte limit. Plain events rather than `for await`, whose
 * async iterator costs measurable time per request at saturation.
 */
export function collectBody(stream: Readable, options: CollectOptions): Promise<Buffer> {
  // A stream destroyed before we listen emits nothing more: waiting on it would never end.
  if (stream.destroyed) return Promise.reject(options.broken(undefined))
  const { limit } = options
  const expected = options.expectedBytes
  const declared = expected !== undefined && Number.isSafeInteger(expected) && expected > 0 && expected <= limit ? expected : 0
  const target = declared <= PREALLOCATE_BYTES ? declared : 0
  const errorAtClose = options.errorAtClose === true
  return new Promise((resolvePromise, rejectPromise) => {
    // The listeners stay on the stream after its end (see `cleanup`), and with them this scope: what settles the
    // promise is let go once it did, or a request object kept for a call's life (a background one runs on for
    // minutes) would keep its whole body, through the settled promise, and its chunks.
    let settle: { resolve: (body: Buffer) => void; reject: (error: unknown) => void } | undefined = {
      resolve: resolvePromise,
      reject: rejectPromise,
    }
    /** What settles the promise, once: the body's buffers go with it. */
    const release = () => {
      const done = settle
      settle = undefined
      chunks = []
      whole = undefined
      return done
    }
    const resolve = (body: Buffer) => release()?.resolve(body)
    const reject = (error: unknown) => release()?.reject(error)
    let chunks: Buffer[] = []
    // The buffer of a declared length, made at the first chunk: a body that comes whole in one chunk is kept as is.
    let whole: Buffer | undefined
    let size = 0
    // Bytes counted against the budget so far: the preallocated buffer, else what arrived.
    let counted = 0
    let settled = false
    const deadline = options.deadline
    const disarm = deadline?.at.arm(() => {
      if (settled) return
      settled = true
      cleanup()
      stream.pause()
      reject(deadline.error())
    })
    // Only a failure takes the listeners off: after `end` the stream emits nothing that `settled` does not ignore,
    // and removing four listeners costs more than the garbage they leave.
    const cleanup = () => {
      disarm?.()
      stream.off('data', onData)
      stream.off('end', onEnd)
      if (!errorAtClose) stream.off('error', onError)
      stream.off('close', onClose)
    }
    const fail = (error: Error, overflow: boolean) => {
      if (settled) return
      settled = true
      cleanup()
      if (overflow && options.afterOverflow === 'drain') {
        stream.resume()
      } else if (overflow) {
        // Some streams (undici's bodies) report their own destruction as an error: nobody may be left unheard.
        stream.on('error', () => {})
        stream.destroy()
      }
      reject(error)
    }
    const overBudget = () => fail((options.overBudget ?? options.tooLarge)(), true)
    const onData = (chunk: Buffer) => {
      if (target > 0 && (whole !== undefined || chunks.length === 0)) {
        const needed = size + chunk.length
        // The first chunk takes the declared length's memory (kept as it is, or the buffer it is copied into).
        if (counted === 0) {
          if (options.budget && !options.budget.grow(target)) return overBudget()
          counted = target
        }
        if (whole === undefined && needed === target) {
          whole = chunk
          size = needed
          return
        }
        if (needed <= target) {
          whole ??= Buffer.allocUnsafe(target)
          chunk.copy(whole, size)
          size = needed
          return
        }
        // More than declared (a host that re-emits data): carry on as an unsized body.
        chunks = whole === undefined ? [] : [whole.subarray(0, size)]
        whole = undefined
      }
      size += chunk.length
      if (size > limit) return fail(options.tooLarge(), true)
      if (size > counted) {
        if (options.budget && !options.budget.grow(size - counted)) return overBudget()
        counted = size
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      if (settled) return
      settled = true
      disarm?.()
      if (whole) return resolve(size === whole.length ? whole : whole.subarray(0, size))
      const joined = joinedNow(chunks, size)
      if (joined) resolve(joined)
      else {
        const taken = chunks
        chunks = []
        joinInSlices(taken, size).then(resolve, reject)
      }
    }
    // Settled first: a request emits `close` after every `end`, and an error object costs its stack trace.
    const onError = (error: unknown) => settled || fail(options.broken(error), false)
    const onClose = () => settled || fail(options.broken(errorAtClose ? (stream.errored ?? undefined) : undefined), false)
    stream.on('data', onData)
    stream.on('end', onEnd)
    if (!errorAtClose) stream.on('error', onError)
    stream.on('close', onClose)
  })
}
