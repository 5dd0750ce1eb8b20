/** Calls `onExpire` once the deadline passes, unless the returned function is called first. */
export interface Deadline {
  arm(onExpire: () => void): () => void
}

/** One armed deadline: a link of the sweeper's list, in the order they were armed. */
interface Armed {
  readonly at: number
  readonly onExpire: () => void
  prev: Armed | undefined
  next: Armed | undefined
  /** Whether it is still in the list: a disarm after the expiry (or a second one) does nothing. */
  linked: boolean
}

/**
 * One timer for many deadlines of the same length (every request body of a gateway), instead of a timer per
 * request. Entries expire in the order they were armed, so they are kept in a linked list: arming appends,
 * disarming unlinks, and a sweep stops at the first one still running. A Set did the same, but one that grows and
 * shrinks with every request rehashes its table again and again. The timer runs only while something is armed and
 * never keeps the process up.
 */
export class DeadlineSweeper implements Deadline {
  private head: Armed | undefined
  private tail: Armed | undefined
  private timer: NodeJS.Timeout | undefined
  private readonly tickMs: number

  constructor(readonly ms: number) {
    // A tenth of the deadline, within 10 ms..1 s: late by at most that, at one wake-up per tick.
    this.tickMs = Math.max(10, Math.min(1000, Math.floor(ms / 10)))
  }

  arm(onExpire: () => void): () => void {
    const entry: Armed = { at: Date.now() + this.ms, onExpire, prev: this.tail, next: undefined, linked: true }
    if (this.tail) this.tail.next = entry
    else this.head = entry
    this.tail = entry
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.tickMs)
      this.timer.unref()
    }
    return () => this.unlink(entry)
  }

  private unlink(entry: Armed): void {
    if (!entry.linked) return
    entry.linked = false
    const { prev, next } = entry
    if (prev) prev.next = next
    else this.head = next
    if (next) next.prev = prev
    else this.tail = prev
    entry.prev = undefined
    entry.next = undefined
  }

  private sweep(): void {
    const now = Date.now()
    // An expiry may arm or disarm others: the head is read again each time.
    for (let entry = this.head; entry !== undefined && entry.at <= now; entry = this.head) {
      this.unlink(entry)
      entry.onExpire()
    }
    if (this.head === undefined && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}
