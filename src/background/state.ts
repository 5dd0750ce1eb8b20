// What the store holds of a background call, for every process that shares it: one small head (its status, how
// many event segments were written, and until when the process running it vouches for it), its object apart, and
// its events in numbered segments, all under the owner's keys, so another owner finds nothing. The object echoes the
// request (instructions, tools, metadata: megabytes) and is written when it changes (created, ended), never with the
// head, which is written every tick and read by every follower as often.
import type { BackgroundFormat, BackgroundStatus } from '../dialects/index.js'
import { eventData } from '../sse/parse.js'
import type { GatewayStore } from '../store/gateway-store.js'

/** The head of a background call in the store. */
export interface BackgroundHead {
  /** 2 since the object is kept apart; a head of 1 carries it. */
  v: 1 | 2
  status: BackgroundStatus
  /** The object in a head of version 1 only. */
  object?: Record<string, unknown>
  /**
   * The sequence number of the event that carries the call's object (its created event, the event that ended it),
   * and the segment that holds it; absent when the object is kept apart (an end no event told).
   */
  objectAt?: { seq: number; segment: number }
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
  object: (requestId: string) => `bgobj:${requestId}`,
  cancel: (requestId: string) => `bgcancel:${requestId}`,
  /** Who settled the lease that ended at `epoch` (lapse.ts): readers gave the call up, or its holder resumed it. */
  verdict: (requestId: string, epoch: number) => `bglapse:${requestId}:${epoch}`,
  /** When a reader first saw the lease that ended at `epoch` passed. */
  lapseSeen: (requestId: string, epoch: number) => `bgseen:${requestId}:${epoch}`,
}

/** The cancel mark of a call deleted while another process ran it: readers anywhere answer 404 from then on. */
export const DELETE_MARK = 'delete'

/** Whether a status is an end: nothing changes a call after it. */
export const hasEnded = (status: BackgroundStatus) => status !== 'queued' && status !== 'in_progress'

/**
 * What every reader is told of a call given up (lapse.ts): its process stopped before it ended, or could not reach the
 * store for a lease after another process could. Its holder, if alive, ends it with these same words.
 */
export const STOPPED_MESSAGE =
  'The gateway process running this response stopped before it ended, or could not reach the store for longer than its lease; create the response again.'

/** Reads a head; undefined when absent or not one. */
export function parseHead(text: string | undefined): BackgroundHead | undefined {
  if (text === undefined) return undefined
  try {
    const head = JSON.parse(text) as Partial<BackgroundHead>
    return (head.v === 1 || head.v === 2) && typeof head.segments === 'number' && typeof head.status === 'string'
      ? (head as BackgroundHead)
      : undefined
  } catch {
    return undefined
  }
}

/** A call's head as the store has it now, or undefined when the owner has no such call. */
export async function readHead(store: GatewayStore, owner: string, requestId: string): Promise<BackgroundHead | undefined> {
  return parseHead(await store.getValue(owner, backgroundNames.head(requestId)))
}

/**
 * A call's object as the store has it, in the status its head says (the object is written when created and when
 * ended; `in_progress` in between is the head's); undefined when it is gone.
 */
export async function readObject(
  store: GatewayStore,
  format: BackgroundFormat,
  owner: string,
  requestId: string,
  head: BackgroundHead,
): Promise<Record<string, unknown> | undefined> {
  let object = head.object
  if (object === undefined && head.objectAt) {
    const { seq, segment } = head.objectAt
    const numbered = `"sequence_number":${seq},`
    for (const sse of (await readSegment(store, owner, requestId, segment)) ?? []) {
      // Only the event numbered `seq` is parsed: its number comes first in it, after its type.
      if (!sse.slice(0, 256).includes(numbered)) continue
      const data = eventObject(sse)
      if (data?.sequence_number === seq) object = format.objectOf(data)
    }
    if (object === undefined) return undefined
  } else if (object === undefined) {
    const text = await store.getValue(owner, backgroundNames.object(requestId))
    if (text === undefined) return undefined
    try {
      object = JSON.parse(text) as Record<string, unknown>
    } catch {
      return undefined
    }
  }
  return head.status === 'in_progress' && object.status === 'queued' ? format.started(object) : object
}

/** The data of one kept event, parsed; undefined when it is not an object. */
function eventObject(sse: string): Record<string, unknown> | undefined {
  for (const data of eventData(sse)) {
    try {
      const parsed = JSON.parse(data) as unknown
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * The events of segment `n`, each the text of one kept event; undefined when the segment is gone (expired, evicted).
 * A segment is its events' text one after the other (each ends with a blank line, which no event holds inside), so
 * each event is a slice of the text as kept, not a copy: readers of one call in the memory store share its text.
 */
export async function readSegment(store: GatewayStore, owner: string, requestId: string, n: number): Promise<string[] | undefined> {
  const text = await store.getValue(owner, backgroundNames.segment(requestId, n))
  if (text === undefined) return undefined
  // A segment written before segments were plain text: a JSON array of the events.
  if (text.startsWith('[')) {
    try {
      const events = JSON.parse(text) as unknown
      return Array.isArray(events) ? events.filter((e): e is string => typeof e === 'string') : undefined
    } catch {
      return undefined
    }
  }
  const events: string[] = []
  for (let from = 0; from < text.length; ) {
    const end = text.indexOf('\n\n', from)
    const to = end < 0 ? text.length : end + 2
    events.push(text.slice(from, to))
    from = to
  }
  return events
}

/** Removes a call's head, segments and (unless `keepMark`, for the process still running it) its cancel mark. */
export async function removeCall(
  store: GatewayStore,
  owner: string,
  requestId: string,
  segments: number,
  options: { keepMark?: boolean } = {},
): Promise<void> {
  await store.deleteValue(owner, backgroundNames.head(requestId))
  await store.deleteValue(owner, backgroundNames.object(requestId))
  if (!options.keepMark) await store.deleteValue(owner, backgroundNames.cancel(requestId))
  for (let n = 0; n < segments; n++) await store.deleteValue(owner, backgroundNames.segment(requestId, n))
}
