import { GatewayError, InvariantError, isGatewayError } from '../errors.js'
import type { DeadlineSweeper } from '../http/deadlines.js'

/** The error every store failure surfaces as (503 on the recoveries endpoints). */
export function storeUnavailable(message: string, cause?: unknown): GatewayError {
  return new GatewayError('store_unavailable', message, cause === undefined ? undefined : { cause })
}

/** The cause of a store error whose operation did not answer in time: it may still take effect later. */
export class StoreDeadline extends Error {
  override readonly name = 'StoreDeadline'
}

/** The cause of a store error raised because the store was closed: nothing will ever take the write. */
export class StoreClosed extends Error {
  override readonly name = 'StoreClosed'
}

/** The error every call to a closed store fails with. */
export function storeClosed(message: string): GatewayError {
  return storeUnavailable(message, new StoreClosed(message))
}

/** True when a store error means the store was closed (the gateway shuts down): trying again is pointless. */
export function isStoreClosed(error: unknown): boolean {
  return isGatewayError(error) && error.cause instanceof StoreClosed
}

/** True when a store error means "no answer in time", not "refused": a write may still land. */
export function outcomeUnknown(error: unknown): boolean {
  return isGatewayError(error) && error.cause instanceof StoreDeadline
}

/**
 * Runs one store operation with a deadline. GatewayErrors and broken invariants pass through; anything else thrown by
 * Keyv, an adapter or a client becomes GatewayError('store_unavailable') with the original as cause.
 * On timeout the operation keeps running in the background; its late failure is swallowed.
 */
export function guarded<T>(what: string, timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  return guardedSteps(what, timeoutMs, operation)
}

/**
 * `guarded` for an operation that walks a store in steps: every call of `step` restarts the deadline, so a walk of
 * any length can finish while a store that stops answering still fails within `timeoutMs` of its last answer.
 */
export async function guardedSteps<T>(what: string, timeoutMs: number, operation: (step: () => void) => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const step = () => timer?.refresh()
  const work = Promise.resolve().then(() => operation(step))
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const message = `The gateway's store did not answer within ${timeoutMs} ms (${what}).`
      reject(storeUnavailable(message, new StoreDeadline(message)))
    }, timeoutMs)
    timer.unref()
  })
  try {
    return await Promise.race([work, deadline])
  } catch (error) {
    work.catch(() => {})
    throw asStoreError(what, error)
  } finally {
    clearTimeout(timer)
  }
}

/** What a store operation's failure surfaces as: GatewayErrors and broken invariants as they are, anything else as `store_unavailable`. */
function asStoreError(what: string, error: unknown): unknown {
  if (isGatewayError(error) || error instanceof InvariantError) return error
  return storeUnavailable(`The gateway's store failed (${what}).`, error)
}

/**
 * `guarded` on a shared deadline sweeper instead of a timer of its own: for operations run on every call (the
 * ledger's steps), where a timer set and cleared per operation and a race of two promises cost more than the
 * operation's own work. The deadline is the sweeper's, late by at most its tick.
 */
export function guardedBy<T>(deadline: DeadlineSweeper, what: string, operation: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    const disarm = deadline.arm(() => {
      if (settled) return
      settled = true
      const message = `The gateway's store did not answer within ${deadline.ms} ms (${what}).`
      reject(storeUnavailable(message, new StoreDeadline(message)))
    })
    operation().then(
      (value) => {
        if (settled) return
        settled = true
        disarm()
        resolve(value)
      },
      (error: unknown) => {
        if (settled) return
        settled = true
        disarm()
        reject(asStoreError(what, error))
      },
    )
  })
}

/**
 * Serialises async work per key, in this process only. Two processes sharing a non-Redis Keyv store
 * can still interleave their read-modify-write of one catalog; sharing a store across processes needs Redis.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>()

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = previous.then(() => current)
    this.#tails.set(key, tail)
    await previous
    try {
      return await work()
    } finally {
      release()
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
  }
}
