import { GatewayError } from '../errors.js'
import type { RunLog } from './run-log.js'

/** How many background calls may run in this process at once: for each owner, and for all together. */
export interface RunningBounds {
  maxRunningPerOwner: number
  maxRunning: number
}

/** The background calls this process runs, by the request id that created them. */
export class BackgroundCalls {
  readonly #runs = new Map<string, RunLog>()
  /** Places taken, per owner: a create takes one before it awaits anything, so a burst cannot pass the bound together. */
  readonly #places = new Map<string, number>()
  #taken = 0

  /**
   * Takes a place for a new call of `owner`, freed by calling what it returns (once its call ended, or its create
   * failed); throws the 429 when the owner, or the process, runs as many as it may.
   */
  claim(owner: string, bounds: RunningBounds): () => void {
    const mine = this.#places.get(owner) ?? 0
    if (mine >= bounds.maxRunningPerOwner || this.#taken >= bounds.maxRunning) {
      const [name, bound] =
        mine >= bounds.maxRunningPerOwner
          ? ['background.maxRunningPerOwner', bounds.maxRunningPerOwner]
          : ['background.maxRunning', bounds.maxRunning]
      throw new GatewayError(
        'rate_limit_exceeded',
        `Too many background responses are running (${name}: ${bound}); try again once one has ended.`,
        { retryAfterSeconds: 1 },
      )
    }
    this.#places.set(owner, mine + 1)
    this.#taken++
    let freed = false
    return () => {
      if (freed) return
      freed = true
      this.#taken--
      const left = (this.#places.get(owner) ?? 1) - 1
      if (left === 0) this.#places.delete(owner)
      else this.#places.set(owner, left)
    }
  }

  add(run: RunLog): void {
    this.#runs.set(run.who.requestId, run)
    // Gone from here once its last state is written: readers then find it in the store.
    void run.ended.then(() => this.#runs.delete(run.who.requestId))
  }

  /** The call `requestId` of `owner` running here; another owner's is not found. */
  get(owner: string, requestId: string): RunLog | undefined {
    const run = this.#runs.get(requestId)
    return run?.who.owner === owner ? run : undefined
  }

  /** How many run here now. */
  get size(): number {
    return this.#runs.size
  }

  /** Resolves once every call running now has ended. */
  settled(): Promise<void> {
    return Promise.all([...this.#runs.values()].map((run) => run.ended)).then(() => undefined)
  }

  /** Stops every call still running (the gateway shuts down): each ends `failed`, saying why. */
  stopAll(message: string): Promise<void> {
    for (const run of this.#runs.values()) run.stop('failed', message)
    return this.settled()
  }
}
