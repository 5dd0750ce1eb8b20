// Reading a background call's events after a sequence number: from the process running it as they come, else from
// the store, polled as often as the running process writes, until its head says it ended (or readers gave it up).
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BackgroundFormat } from '../dialects/index.js'
import { isGatewayError } from '../errors.js'
import { ClientSink, type ResponseHead } from '../http/sink.js'
import type { Runtime } from '../runtime.js'
import type { GatewayStore } from '../store/gateway-store.js'
import { keptEvent } from './kept-event.js'
import { givenUp, type LapseClock } from './lapse.js'
import { BACKGROUND_TICK_MS, type RunLog } from './run-log.js'
import { type BackgroundHead, hasEnded, readHead, readObject, readSegment, STOPPED_MESSAGE } from './state.js'

/** Whether a running call's process has not renewed its lease in time: suspected, not yet given up (lapse.ts). */
export const leaseLapsed = (head: BackgroundHead) => !hasEnded(head.status) && head.leaseUntil < Date.now()

/**
 * Whether readers gave a running call up: its lease passed and its process did not come back within a further
 * lease (lapse.ts). A call that ended, or whose lease holds, is never given up.
 */
export function isGivenUp(
  store: GatewayStore,
  owner: string,
  requestId: string,
  head: BackgroundHead,
  clock: LapseClock,
): Promise<boolean> {
  if (!leaseLapsed(head)) return Promise.resolve(false)
  return givenUp({ store, owner, requestId }, head.leaseUntil, clock)
}

/** A call's object as a retrieve shows it: a call given up is `failed`, saying so; undefined when gone. */
export async function shownObject(
  store: GatewayStore,
  format: BackgroundFormat,
  owner: string,
  requestId: string,
  head: BackgroundHead,
  clock: LapseClock,
): Promise<Record<string, unknown> | undefined> {
  const object = await readObject(store, format, owner, requestId, head)
  if (object === undefined) return undefined
  return (await isGivenUp(store, owner, requestId, head, clock)) ? format.ended(object, 'failed', STOPPED_MESSAGE) : object
}

/**
 * Serves a background call's events as a stream: `head` first, then what `follow` writes, with keep-alives through
 * the quiet spells of a call still thinking (a CDN in front would cut the stream as it cuts a plain one).
 */
export async function streamEvents(
  rt: Runtime,
  res: ServerResponse,
  head: ResponseHead,
  follow: (sink: ClientSink) => Promise<void>,
): Promise<void> {
  const sink = new ClientSink(res, rt.clientDeadlines.write)
  sink.open(head)
  const release = rt.keepAlive?.hold(sink)
  try {
    await follow(sink)
  } finally {
    release?.()
  }
}

/** Resolves when the client's socket can take more, or the client left (a client that takes nothing is cut in time). */
function drainedOrGone(sink: ClientSink): Promise<void> {
  if (sink.watch.clientGone) return Promise.resolve()
  return new Promise((resolve) => {
    const stops: Array<() => void> = []
    const done = () => {
      for (const stop of stops) stop()
      resolve()
    }
    stops.push(sink.onDrain(done), sink.watch.onGone(done))
  })
}

/** The most of one event written at once: an event of megabytes (a final object) goes out a slice at a time. */
const WRITE_SLICE_CHARS = 64 * 1024

/**
 * Writes one event paced by the client: a slice at a time, the next once the socket took the last, so a reader that
 * does not read holds one slice of it, never a copy of the whole.
 */
async function writeEvent(sink: ClientSink, sse: string): Promise<void> {
  for (let from = 0; from < sse.length && !sink.watch.clientGone; ) {
    let to = Math.min(sse.length, from + WRITE_SLICE_CHARS)
    // Never between the two halves of a surrogate pair, which encode differently alone.
    const last = sse.charCodeAt(to - 1)
    if (to < sse.length && to - 1 > from && last >= 0xd800 && last <= 0xdbff) to--
    if (!sink.write(Buffer.from(sse.slice(from, to), 'utf8'))) await drainedOrGone(sink)
    from = to
  }
}

/**
 * Writes the events of a call running here after `after`, then those to come, until it ends or the client leaves.
 * Paced by the client: the events are read from the call's log where they are kept anyway, and the next is written
 * only once the socket took the last, so a reader that does not read holds no copy of them.
 */
export async function followHere(run: RunLog, after: number, sink: ClientSink): Promise<void> {
  let next = after + 1
  let wake: (() => void) | undefined
  const stop = run.follow(Number.MAX_SAFE_INTEGER, {
    event: () => wake?.(),
    end: () => wake?.(),
  })
  try {
    while (!sink.watch.clientGone) {
      while (next < run.events.length && !sink.watch.clientGone) {
        await writeEvent(sink, run.event(next++))
      }
      // Checked in the same turn as the wait below is set up: an event or end after it wakes the wait.
      if (sink.watch.clientGone || (hasEnded(run.status) && next >= run.events.length)) break
      if (next < run.events.length) continue
      let stopWatching = () => {}
      await new Promise<void>((resolve) => {
        wake = resolve
        stopWatching = sink.watch.onGone(resolve)
      })
      stopWatching()
      wake = undefined
    }
  } finally {
    stop()
  }
  if (!sink.watch.clientGone) sink.end()
}

/** Where a call another process runs is read from. */
export interface StoredCall {
  store: GatewayStore
  format: BackgroundFormat
  owner: string
  requestId: string
  clock: LapseClock
}

/**
 * A store read for a follower: tried again while the store is out of reach (the call goes on meanwhile, and its
 * process writes what it missed once the store is back), until it answers or the client left (then undefined).
 */
async function patiently<T>(sink: ClientSink, read: () => Promise<T>): Promise<T | undefined> {
  for (;;) {
    try {
      return await read()
    } catch (error) {
      if (!isGatewayError(error) || error.code !== 'store_unavailable' || sink.watch.clientGone) throw error
      await sleep(BACKGROUND_TICK_MS * 5)
      if (sink.watch.clientGone) return undefined
    }
  }
}

/** What a reader is told where kept events are missing (their segment expired or was evicted). */
function gapEvent(from: number, seq: number): string {
  const message = `Events from sequence number ${from} of this response are no longer kept; the events after them are not sent.`
  return keptEvent({ type: 'error', code: 'events_lost', message, param: null }, seq)
}

/** Writes the events of a call kept in the store after `after`, following it while it runs elsewhere. */
export async function followStored(call: StoredCall, after: number, sink: ClientSink): Promise<void> {
  const { store, format, owner, requestId, clock } = call
  // Paced by the client, as a replay of a recovery is: one segment is held at a time.
  const write = (sse: string) => writeEvent(sink, sse)
  let seq = -1
  let segment = 0
  following: while (!sink.watch.clientGone) {
    const head = await patiently(sink, () => readHead(store, owner, requestId))
    // Deleted meanwhile: nothing more will come.
    if (!head) break
    while (segment < head.segments && !sink.watch.clientGone) {
      const events = await patiently(sink, () => readSegment(store, owner, requestId, segment))
      if (sink.watch.clientGone) break following
      if (events === undefined) {
        // A replay with a hole must not end as if whole: it ends with an error naming where the hole starts.
        if (++seq > after) await write(gapEvent(seq, seq))
        break following
      }
      for (const sse of events) {
        if (sink.watch.clientGone) break following
        if (++seq > after) await write(sse)
      }
      segment++
    }
    if (hasEnded(head.status)) break
    if (await patiently(sink, () => isGivenUp(store, owner, requestId, head, clock))) {
      const object = await patiently(sink, () => shownObject(store, format, owner, requestId, head, clock))
      const told = object && format.endEvent(object)
      if (told && ++seq > after) await write(keptEvent(told, seq))
      break
    }
    await sleep(BACKGROUND_TICK_MS)
  }
  if (!sink.watch.clientGone) sink.end()
}
