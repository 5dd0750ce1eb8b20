import type { Operation } from '../../types.js'
import type { StreamLog } from './stream-log.js'

/** A call of this process that a resume can follow or a cancel can stop, by its request id. */
export interface FollowableCall {
  readonly owner: string
  readonly requestId: string
  /** The events so far, for a resumable stream; undefined for a whole call. */
  readonly log: StreamLog | undefined
  /** The call's operation: a resume writes the stream in its framing. */
  readonly operation: Operation | undefined
  /** Stops the upstream call on purpose; what was generated so far is kept. */
  cancel(): void
  /** True once `cancel` was called. */
  readonly cancelled: boolean
}

/** A live call whose `cancel` runs `stop` once. */
export function followableCall(
  owner: string,
  requestId: string,
  log: StreamLog | undefined,
  stop: () => void,
  operation?: Operation,
): FollowableCall {
  let cancelled = false
  return {
    owner,
    requestId,
    log,
    operation,
    cancel() {
      if (cancelled) return
      cancelled = true
      stop()
    },
    get cancelled() {
      return cancelled
    },
  }
}

/**
 * The calls of this process that can be resumed or cancelled: resumable streams from their first byte, whole calls
 * once their client left. One map entry per such call, nothing in the store.
 */
export class FollowableCalls {
  readonly #calls = new Map<string, FollowableCall>()

  add(call: FollowableCall): void {
    this.#calls.set(`${call.owner}:${call.requestId}`, call)
  }

  remove(call: FollowableCall): void {
    const key = `${call.owner}:${call.requestId}`
    if (this.#calls.get(key) === call) this.#calls.delete(key)
  }

  /** An owner's live call; another owner's is never found. */
  get(owner: string, requestId: string): FollowableCall | undefined {
    return this.#calls.get(`${owner}:${requestId}`)
  }
}
