// Reading a background call's events after a sequence number: from the process running it as they come, else from
// the store, polled as often as the running process writes, until its head says it ended (or its lease ran out).
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BackgroundFormat } from '../dialects/index.js'
import { ClientSink, type ResponseHead } from '../http/sink.js'
import type { RecoveryStore } from '../recovery/store/recovery-store.js'
import type { Runtime } from '../runtime.js'
import { BACKGROUND_TICK_MS, keptEvent, type RunLog } from './run-log.js'
import { type BackgroundHead, hasEnded, readHead, readSegment, STOPPED_MESSAGE } from './state.js'

/** Whether a running call's process stopped vouching for it: its lease ran out before it ended. */
export const leaseLapsed = (head: BackgroundHead) => !hasEnded(head.status) && head.leaseUntil < Date.now()

/** A call's object as a retrieve shows it: a call whose process stopped is `failed`, saying so. */
export function shownObject(format: BackgroundFormat, head: BackgroundHead): Record<string, unknown> {
  return leaseLapsed(head) ? format.ended(head.object, 'failed', STOPPED_MESSAGE) : head.object
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

/** Writes the events of a call running here after `after`, then those to come, until it ends or the client leaves. */
export function followHere(run: RunLog, after: number, sink: ClientSink): Promise<void> {
  return new Promise((resolve) => {
    let stop = () => {}
    const stopWatching = sink.watch.onGone(() => {
      stop()
      resolve()
    })
    stop = run.follow(after, {
      event: (sse) => void sink.write(Buffer.from(sse)),
      end: () => {
        stopWatching()
        sink.end()
        resolve()
      },
    })
  })
}

/** Where a call another process runs is read from. */
export interface StoredCall {
  store: RecoveryStore
  format: BackgroundFormat
  owner: string
  requestId: string
}

/** Writes the events of a call kept in the store after `after`, following it while it runs elsewhere. */
export async function followStored(call: StoredCall, after: number, sink: ClientSink): Promise<void> {
  const { store, format, owner, requestId } = call
  const write = (sse: string) => void sink.write(Buffer.from(sse))
  let seq = -1
  let segment = 0
  while (!sink.watch.clientGone) {
    const head = await readHead(store, owner, requestId)
    // Deleted meanwhile: nothing more will come.
    if (!head) break
    while (segment < head.segments && !sink.watch.clientGone) {
      for (const sse of await readSegment(store, owner, requestId, segment)) if (++seq > after) write(sse)
      segment++
    }
    if (hasEnded(head.status)) break
    if (leaseLapsed(head)) {
      const told = format.endEvent(shownObject(format, head))
      if (told && ++seq > after) write(keptEvent(told, seq))
      break
    }
    await sleep(BACKGROUND_TICK_MS)
  }
  sink.end()
}
