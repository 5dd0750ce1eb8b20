import { GatewayError } from '../errors.js'

/** Bytes of request bodies held by one request, counted against the gateway's and its owner's budgets. */
export interface Reservation {
  /** Counts `bytes` more; false (and nothing counted) when a budget would be exceeded. */
  grow(bytes: number): boolean
  /** Gives every byte back; safe to call twice. */
  release(): void
}

/** What `InFlightBudget` allows. */
export interface InFlightLimits {
  /** All request bodies held at once, gateway-wide. */
  total: number
  /** Request bodies held at once by one owner. */
  perOwner: number
}

/**
 * Bounds the request-body bytes held at once, in total and per owner, so a burst of large uploads (or of
 * connections that only declare large bodies) answers 503 instead of exhausting memory, and one owner cannot
 * take the whole budget from the others.
 */
export class InFlightBudget {
  private total = 0
  private readonly byOwner = new Map<string, number>()

  constructor(private readonly limits: InFlightLimits) {}

  /** A reservation of `bytes` (the declared length, or 0 for a body of unknown length), or a 503 to answer with. */
  reserve(owner: string, bytes: number): Reservation {
    let held = 0
    const grow = (more: number): boolean => {
      const ownerHeld = this.byOwner.get(owner) ?? 0
      if (this.total + more > this.limits.total || ownerHeld + more > this.limits.perOwner) return false
      this.total += more
      this.byOwner.set(owner, ownerHeld + more)
      held += more
      return true
    }
    if (!grow(bytes)) throw overloaded()
    return {
      grow,
      release: () => {
        if (held === 0) return
        this.total -= held
        const left = (this.byOwner.get(owner) ?? 0) - held
        if (left > 0) this.byOwner.set(owner, left)
        else this.byOwner.delete(owner)
        held = 0
      },
    }
  }

  /** Bytes held now, for status reports and tests. */
  get held(): number {
    return this.total
  }
}

/** The 503 for a body that does not fit the in-flight budget right now; the client may try again shortly. */
export function overloaded(): GatewayError {
  return new GatewayError('overloaded', 'The gateway is holding as many request bytes as it allows; try again shortly.', {
    retryAfterSeconds: 1,
  })
}
