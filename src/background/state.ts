// What the store holds of a background call, for every process that shares it: one head (its status, its latest
// object, how many event segments were written, and until when the process running it vouches for it) and its
// events in numbered segments, all under the owner's keys, so another owner finds nothing.
import type { BackgroundStatus } from '../dialects/index.js'
import type { RecoveryStore } from '../recovery/store/recovery-store.js'

/** The head of a background call in the store. */
export interface BackgroundHead {
  v: 1
  status: BackgroundStatus
  /** The call's object as a retrieve shows it: the pending one while it runs, its final one once it ended. */
  object: Record<string, unknown>
  /** How many event segments were written. */
  segments: number
  /** How many events those segments hold. */
  events: number
  /**
   * Until when (ms since the epoch) the process running the call vouches for it: it writes the head again before
   * then. A running call whose lease passed was left by a process that stopped.
   */
  leaseUntil: number
}

/** The store names of one call, by the gateway request id that created it. */
export const backgroundNames = {
  head: (requestId: string) => `bg:${requestId}`,
  segment: (requestId: string, n: number) => `bg:${requestId}:${n}`,
  cancel: (requestId: string) => `bgcancel:${requestId}`,
}

/** Whether a status is an end: nothing changes a call after it. */
export const hasEnded = (status: BackgroundStatus) => status !== 'queued' && status !== 'in_progress'

/** What a reader is told of a call whose process stopped before it ended. */
export const STOPPED_MESSAGE =
  'The gateway process running this response stopped before it ended (its lease expired); create the response again.'

/** Reads a head; undefined when absent or not one. */
export function parseHead(text: string | undefined): BackgroundHead | undefined {
  if (text === undefined) return undefined
  try {
    const head = JSON.parse(text) as Partial<BackgroundHead>
    return head.v === 1 && typeof head.segments === 'number' && typeof head.status === 'string' ? (head as BackgroundHead) : undefined
  } catch {
    return undefined
  }
}

/** A call's head as the store has it now, or undefined when the owner has no such call. */
export async function readHead(store: RecoveryStore, owner: string, requestId: string): Promise<BackgroundHead | undefined> {
  return parseHead(await store.getValue(owner, backgroundNames.head(requestId)))
}

/** The events of segment `n`, each the JSON text of one event's data. */
export async function readSegment(store: RecoveryStore, owner: string, requestId: string, n: number): Promise<string[]> {
  const text = await store.getValue(owner, backgroundNames.segment(requestId, n))
  if (text === undefined) return []
  try {
    const events = JSON.parse(text) as unknown
    return Array.isArray(events) ? events.filter((e): e is string => typeof e === 'string') : []
  } catch {
    return []
  }
}

/** Removes a call's head, segments and (unless `keepMark`, for the process still running it) its cancel mark. */
export async function removeCall(
  store: RecoveryStore,
  owner: string,
  requestId: string,
  segments: number,
  options: { keepMark?: boolean } = {},
): Promise<void> {
  await store.deleteValue(owner, backgroundNames.head(requestId))
  if (!options.keepMark) await store.deleteValue(owner, backgroundNames.cancel(requestId))
  for (let n = 0; n < segments; n++) await store.deleteValue(owner, backgroundNames.segment(requestId, n))
}
