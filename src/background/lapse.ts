// A running call whose lease passed is suspected, not given up at once: its process may be alive and only cut off
// from the store (a Redis outage longer than the lease), holding the only copy of an answer the upstream was paid
// for. Readers and the holder settle each passed lease with one set-if-absent verdict in the store, so exactly one
// of two things happens and every reader sees the same: the holder comes back and keeps the call (it writes on, as
// the only writer it always was), or readers give it up after a further lease, and a holder that comes back later
// finds that and stops without writing anything more. Nobody takes the call over: it is never run twice.
import type { GatewayStore } from '../store/gateway-store.js'
import { backgroundNames } from './state.js'

/** The verdict readers write when they give a call up. */
const GIVEN_UP = 'failed'
/** The holder's verdict, followed by the end of the lease it holds from then. */
const RESUMED = 'resumed:'
/** How many leases one look follows: a holder that came back and lapsed again is asked about its next one. */
const MAX_TURNS = 8

/** The lease and lifetime the lapse keys are read and written with. */
export interface LapseClock {
  /** How long a lease lasts; readers give a call up one more lease after the first of them saw it passed. */
  leaseMs: number
  /** How long the verdicts are kept: as long as the call's state. */
  ttlMs: number
}

/** The lease and lifetime a gateway judges lapses with, from its resolved options. */
export function lapseClock(options: { background: { leaseMs: number }; recovery: { ttlMs: number } }): LapseClock {
  return { leaseMs: options.background.leaseMs, ttlMs: options.recovery.ttlMs }
}

/** Where a call's lapse keys are: its owner and request id. */
export interface LapseKeys {
  store: GatewayStore
  owner: string
  requestId: string
}

/**
 * A reader's look at a call whose head says running: true when readers gave it up (its process stopped, or could not
 * reach the store for a lease after the first reader saw its lease passed). The first reader to see a lease passed
 * notes when; until a lease after that, and whenever the holder has said it resumed, the call reads as running.
 */
export async function givenUp(keys: LapseKeys, leaseUntil: number, clock: LapseClock): Promise<boolean> {
  const { store, owner, requestId } = keys
  let epoch = leaseUntil
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const now = Date.now()
    if (epoch >= now) return false
    let verdict = await store.getValue(owner, backgroundNames.verdict(requestId, epoch))
    if (verdict === undefined) {
      const seen = await store.claimValue(owner, backgroundNames.lapseSeen(requestId, epoch), String(now), clock.ttlMs)
      const seenAt = seen === undefined ? now : Number(seen)
      if (!(now - seenAt >= clock.leaseMs)) return false
      verdict = (await store.claimValue(owner, backgroundNames.verdict(requestId, epoch), GIVEN_UP, clock.ttlMs)) ?? GIVEN_UP
    }
    if (verdict === GIVEN_UP) return true
    // The holder came back: it holds the call until the lease it named, and is asked again only past that.
    const held = Number(verdict.slice(RESUMED.length))
    if (!verdict.startsWith(RESUMED) || !Number.isFinite(held)) return true
    epoch = held
  }
  return false
}

/**
 * The holder's side, before it writes anything after a spell in which its lease `leaseUntil` may have passed for a
 * reader: the lease it holds from now on, or undefined when readers gave the call up (it must then stop and write
 * nothing more, so that the state they saw stays the call's last).
 */
export async function resume(keys: LapseKeys, leaseUntil: number, clock: LapseClock): Promise<number | undefined> {
  const { store, owner, requestId } = keys
  let epoch = leaseUntil
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const until = Date.now() + clock.leaseMs
    const verdict = await store.claimValue(owner, backgroundNames.verdict(requestId, epoch), `${RESUMED}${until}`, clock.ttlMs)
    if (verdict === undefined) return until
    if (!verdict.startsWith(RESUMED)) return undefined
    // Its own claim of an earlier try (whose writes then failed): still good unless that lease is itself near its end.
    const held = Number(verdict.slice(RESUMED.length))
    if (!Number.isFinite(held)) return undefined
    if (held - clock.leaseMs / 3 > Date.now()) return held
    epoch = held
  }
  return undefined
}

/**
 * `resume` for every lease readers may have seen: the last one the store confirmed, and any of a head write whose
 * answer was lost but which may have landed. Resumed only when no reader gave up any of them; the lease held is the
 * shortest granted.
 */
export async function resumeEvery(keys: LapseKeys, leases: Iterable<number>, clock: LapseClock): Promise<number | undefined> {
  let held: number | undefined
  for (const lease of leases) {
    const until = await resume(keys, lease, clock)
    if (until === undefined) return undefined
    held = held === undefined ? until : Math.min(held, until)
  }
  return held
}
