import { GatewayError } from '../errors.js'

/** Bytes of request bodies held by one request, counted against the gateway's and its owner's budgets. */
export interface Reservation {
  /** Counts `bytes` more; false (and nothing counted) when a budget would be exceeded. */
  grow(bytes: number): boolean
  /** Gives every byte back; safe to call twice. */
  release(): void
}

/** What `BodyBudget` allows. */
export interface BodyBudgetLimits {
  /** All request bodies held at once, gateway-wide. */
  total: number
  /** Request bodies held at once by one owner. */
  perOwner: number
}

/**
 * Bounds the request-body bytes held at once, in total and per owner, so a burst of large uploads answers 503
 * instead of exhausting memory, and one owner cannot take the whole budget from the others. Bytes are counted as
 * memory is taken for them, never from a declared length alone: idle connections that declare large bodies and send
 * none hold next to nothing.
 */
export class BodyBudget {
  private total = 0
  private readonly byOwner = new Map<string, number>()

  constructor(private readonly limits: BodyBudgetLimits) {}

  /** A reservation of `bytes` (those already in memory; a streamed body grows it as it arrives), or a 503 to answer with. */
  reserve(owner: string, bytes: number): Reservation {
    const reservation = new Held(this, owner)
    if (!reservation.grow(bytes)) throw overloaded()
    return reservation
  }

  /** Counts `more` bytes for `owner`; false (and nothing counted) past a budget. */
  take(owner: string, more: number): boolean {
    // Nothing to count: no map entry either, which only a release could take away again.
    if (more === 0) return true
    const ownerHeld = this.byOwner.get(owner) ?? 0
    if (this.total + more > this.limits.total || ownerHeld + more > this.limits.perOwner) return false
    this.total += more
    this.byOwner.set(owner, ownerHeld + more)
    return true
  }

  /** Gives `bytes` of `owner` back. */
  give(owner: string, bytes: number): void {
    this.total -= bytes
    const left = (this.byOwner.get(owner) ?? 0) - bytes
    if (left > 0) this.byOwner.set(owner, left)
    else this.byOwner.delete(owner)
  }

  /** Bytes held now, for status reports and tests. */
  get held(): number {
    return this.total
  }
}

/** One request's share of the budget: an object with methods rather than two closures per request. */
class Held implements Reservation {
  private bytes = 0

  constructor(
    private readonly budget: BodyBudget,
    private readonly owner: string,
  ) {}

  grow(more: number): boolean {
    if (!this.budget.take(this.owner, more)) return false
    this.bytes += more
    return true
  }

  release(): void {
    if (this.bytes === 0) return
    this.budget.give(this.owner, this.bytes)
    this.bytes = 0
  }
}

/** The 503 for a body that does not fit the body budget right now; the client may try again shortly. */
export function overloaded(): GatewayError {
  return new GatewayError('overloaded', 'The gateway is holding as many request bytes as it allows; try again shortly.', {
    retryAfterSeconds: 1,
  })
}
