import { setTimeout as pause } from 'node:timers/promises'
import type { ClientFraming } from '../../dialects/framing/framing.js'
import { DEFAULT_FRAMING, operationFraming } from '../../dialects/framing/index.js'
import type { ClientSink, ResponseHead } from '../../http/sink.js'
import { TEXT_SLICE_CHARS } from '../../json/text-in-slices.js'
import { EventSplitter } from '../../sse/split.js'
import type { GatewayStore } from '../../store/gateway-store.js'
import { hasData, splitEvents } from './events.js'
import { JOURNAL_TICK_MS, type JournalHead, journalNames, parseJournalHead } from './journal.js'
import { isAfter, type StreamLog } from './stream-log.js'

/** The head of a resumed or joined stream, in `framing` (the stream's operation's, where it is known). */
export function streamHead(extra: Record<string, string> = {}, framing: ClientFraming = DEFAULT_FRAMING): ResponseHead {
  return { status: 200, headers: { ...framing.headers, ...extra } }
}

/** Writes the events of a stream text after number `after`; `counted` carries the numbering across calls. */
export function writeEventsAfter(sink: ClientSink, text: string, after: number, counted: { seen: number }): void {
  for (const event of splitEvents(Buffer.from(text))) {
    const id = hasData(event) ? ++counted.seen : 0
    if (isAfter({ id, bytes: event }, after, counted.seen)) sink.write(event)
  }
}

/**
 * `writeEventsAfter` for a kept stream's whole text, which may be tens of megabytes: encoded and split a slice at a
 * time with a turn of the event loop between slices (at once, a 30 MB replay stalled every other request), and paced
 * by the client: after a write its socket did not take, the replay waits for the drain, and ends when the client leaves.
 */
export async function replayEventsAfter(sink: ClientSink, text: string, after: number, counted: { seen: number }): Promise<void> {
  const splitter = new EventSplitter()
  const send = async (event: Buffer) => {
    const id = hasData(event) ? ++counted.seen : 0
    if (isAfter({ id, bytes: event }, after, counted.seen) && !sink.write(event)) await drainedOrGone(sink)
  }
  for (let from = 0; from < text.length; ) {
    let end = Math.min(text.length, from + TEXT_SLICE_CHARS)
    // Never between the two halves of a surrogate pair, which encode differently alone.
    const last = text.charCodeAt(end - 1)
    if (end < text.length && end - 1 > from && last >= 0xd800 && last <= 0xdbff) end--
    for (const event of splitter.push(Buffer.from(text.slice(from, end), 'utf8'))) {
      if (sink.watch.clientGone) return
      await send(event)
    }
    from = end
    if (from < text.length) await new Promise(setImmediate)
  }
  const rest = splitter.rest()
  if (rest && rest.length > 0 && !sink.watch.clientGone) await send(rest)
}

/** Resolves when the client's socket can take more, or the client left. */
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
export async function followJournal(store: GatewayStore, owner: string, requestId: string, after: number, sink: ClientSink): Promise<void> {
  const counted = { seen: 0 }
  let segment = 0
  while (!sink.watch.clientGone) {
    const head = parseJournalHead(await store.getValue(owner, journalNames.head(requestId)))
    if (!head) {
      const streamed = (await store.get(owner, requestId))?.response.stream_raw
      if (streamed !== undefined) await replayEventsAfter(sink, streamed, Math.max(after, counted.seen), { seen: 0 })
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

/** The head of the stream with this request id that another process journals right now (its client left), if any. */
export async function runningJournal(store: GatewayStore, owner: string, requestId: string): Promise<JournalHead | undefined> {
  const head = parseJournalHead(await store.getValue(owner, journalNames.head(requestId)))
  return head?.stream === true && head.state === 'running' ? head : undefined
}

/** The framing a stream followed from a journal is written in: its call's operation's, as its own client got it. */
export function journalFraming(head: JournalHead): ClientFraming {
  return head.operation === undefined ? DEFAULT_FRAMING : operationFraming(head.operation)
}
