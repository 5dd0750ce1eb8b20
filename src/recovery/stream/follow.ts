import { setTimeout as pause } from 'node:timers/promises'
import type { ClientSink, ResponseHead } from '../../http/sink.js'
import type { RecoveryStore } from '../store/recovery-store.js'
import { hasData, splitEvents } from './events.js'
import { JOURNAL_TICK_MS, journalNames, parseJournalHead } from './journal.js'
import { isAfter, type StreamLog } from './stream-log.js'

/** The head of a resumed or joined stream. */
export function streamHead(extra: Record<string, string> = {}): ResponseHead {
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...extra } }
}

/** Writes the events of a stream text after number `after`; `counted` carries the numbering across calls. */
export function writeEventsAfter(sink: ClientSink, text: string, after: number, counted: { seen: number }): void {
  for (const event of splitEvents(Buffer.from(text))) {
    const id = hasData(event) ? ++counted.seen : 0
    if (isAfter({ id, bytes: event }, after, counted.seen)) sink.write(event)
  }
}

/** Follows a stream running in this process: its events after `after`, then the live ones, until it ends or the client leaves. */
export function followLog(log: StreamLog, after: number, sink: ClientSink): Promise<void> {
  return new Promise((resolve) => {
    const stop = log.follow(after, {
      event: (event) => sink.write(event.bytes),
      end: () => {
        stopWatching()
        sink.end()
        resolve()
      },
    })
    const stopWatching = sink.watch.onGone(() => {
      stop?.()
      resolve()
    })
  })
}

/**
 * Follows a stream running in another process through its journal in the store, until it ends or the client
 * leaves; a journal gone between two reads means the call ended, and its record (if kept) has the rest.
 */
export async function followJournal(
  store: RecoveryStore,
  owner: string,
  requestId: string,
  after: number,
  sink: ClientSink,
): Promise<void> {
  const counted = { seen: 0 }
  let segment = 0
  while (!sink.watch.clientGone) {
    const head = parseJournalHead(await store.getValue(owner, journalNames.head(requestId)))
    if (!head) {
      const streamed = (await store.get(owner, requestId))?.response.stream_raw
      if (streamed !== undefined) writeEventsAfter(sink, streamed, Math.max(after, counted.seen), { seen: 0 })
      break
    }
    for (; segment < head.segments && !sink.watch.clientGone; segment++) {
      const text = await store.getValue(owner, journalNames.segment(requestId, segment))
      if (text === undefined) break
      writeEventsAfter(sink, text, after, counted)
    }
    if (head.state !== 'running') break
    await pause(JOURNAL_TICK_MS)
  }
  sink.end()
}

/** Whether another process journals a stream with this request id right now (its client left). */
export async function journalRunning(store: RecoveryStore, owner: string, requestId: string): Promise<boolean> {
  const head = parseJournalHead(await store.getValue(owner, journalNames.head(requestId)))
  return head?.stream === true && head.state === 'running'
}
