/** Calls `onExpire` once the deadline passes, unless the returned function is called first. */
export interface Deadline {
  arm(onExpire: () => void): () => void
}

/**
 * One timer for many deadlines of the same length (every request body of a gateway), instead of a timer per
 * request: arming is a Set insertion, disarming a deletion. Entries expire in insertion order, so a sweep stops
 * at the first one still running. The timer runs only while something is armed and never keeps the process up.
 */
export class DeadlineSweeper implements Deadline {
  private readonly armed = new Set<{ at: number; onExpire: () => void }>()
  private timer: NodeJS.Timeout | undefined
  private readonly tickMs: number

  constructor(readonly ms: number) {
    // A tenth of the deadline, within 10 ms..1 s: late by at most that, at one wake-up per tick.
    this.tickMs = Math.max(10, Math.min(1000, Math.floor(ms / 10)))
  }

  arm(onExpire: () => void): () => void {
    const entry = { at: Date.now() + this.ms, onExpire }
    this.armed.add(entry)
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.tickMs)
      this.timer.unref()
    }
    return () => {
      this.armed.delete(entry)
    }
  }

  private sweep(): void {
    const now = Date.now()
    for (const entry of this.armed) {
      if (entry.at > now) break
      this.armed.delete(entry)
      entry.onExpire()
    }
    if (this.armed.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}
