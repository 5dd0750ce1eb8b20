import type { RunLog } from './run-log.js'

/** The background calls this process runs, by the request id that created them. */
export class BackgroundCalls {
  readonly #runs = new Map<string, RunLog>()

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
