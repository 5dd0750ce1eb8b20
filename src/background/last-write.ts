// A background call's last write: tried again while the store is down, and, where the store refuses it for good (past
// its owner's quota), replaced by the smaller end that says why.
import { setTimeout as sleep } from 'node:timers/promises'
import type { BackgroundFormat } from '../dialects/index.js'
import { isStoreClosed } from '../store/guard.js'
import { isOverQuota } from '../store/memory-catalog.js'
import { keptEvent } from './kept-event.js'
import type { RunLimits } from './run-identity.js'

/** Why a call whose state its owner's quota cannot hold was stopped. */
export const OVER_QUOTA_MESSAGE =
  "The response grew past what its owner may keep in the store (recovery.maxBytesPerOwner, or the owner's share of recovery.maxMemoryBytes)."
/** The longest wait between two tries of a call's last write while the store is down (at most a quarter lease). */
const MAX_RETRY_WAIT_MS = 2_000

/**
 * Runs `write` (a call's last write or removal), tried again while the store fails, waiting from `firstWaitMs` and
 * longer each time, for as long as the state would be kept: a final state lost to an outage left a paid call `failed`
 * for its readers, its answer lost. The wait stays within a quarter lease, so a holder whose store is back resumes
 * before readers give it up. `failed` hears each failure tried again.
 */
export async function retriedWhileDown(
  write: () => Promise<void>,
  limits: RunLimits,
  firstWaitMs: number,
  failed: (error: unknown) => void,
): Promise<void> {
  const giveUpAt = Date.now() + limits.ttlMs
  const longest = Math.max(firstWaitMs, Math.min(MAX_RETRY_WAIT_MS, limits.leaseMs / 4))
  for (let wait = firstWaitMs; ; wait = Math.min(2 * wait, longest)) {
    try {
      return await write()
    } catch (error) {
      // Past the owner's quota, trying again only pushes at it; a closed store (the gateway closed) never takes it.
      if (isOverQuota(error) || isStoreClosed(error) || Date.now() + wait > giveUpAt) throw error
      failed(error)
      await sleep(wait, undefined, { ref: false })
    }
  }
}

/** A call ended `failed` after the fact: its object, and the event that tells it (numbered `seq`) where it has one. */
export interface FailedEnd {
  object: Record<string, unknown>
  told: { sse: string; data: Record<string, unknown>; carriesObject: boolean } | undefined
}

/** The object of a call created as `created` (and `started` by its upstream, or not) ended `failed` with `message`. */
export function failedObject(
  format: BackgroundFormat,
  created: Record<string, unknown>,
  started: boolean,
  message: string,
): Record<string, unknown> {
  return format.ended(started ? format.started(created) : created, 'failed', message)
}

/** `failedObject`, with the event that tells that end, numbered `seq`, written as it is kept. */
export function failedEnd(
  format: BackgroundFormat,
  created: Record<string, unknown>,
  started: boolean,
  message: string,
  seq: number,
): FailedEnd {
  const object = failedObject(format, created, started, message)
  const data = format.endEvent(object)
  if (!data) return { object, told: undefined }
  return { object, told: { sse: keptEvent(data, seq), data, carriesObject: format.objectOf(data) === object } }
}
