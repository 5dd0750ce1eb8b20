import { setTimeout as pause } from 'node:timers/promises'
import { DEFAULT_FRAMING, operationFraming } from '../dialects/framing/index.js'
import { GatewayError, invalidField, shown } from '../errors.js'
import type { Exchange } from '../http/dispatch.js'
import { sendJson } from '../http/reply.js'
import { REQUEST_ID_PATTERN } from '../http/request-id.js'
import { ClientSink } from '../http/sink.js'
import { noteServedAgain } from '../idempotency/served-again.js'
import { followJournal, followLog, journalFraming, replayEventsAfter, runningJournal, streamHead } from '../recovery/stream/follow.js'
import { JOURNAL_TICK_MS, journalNames, parseJournalHead } from '../recovery/stream/journal.js'
import type { Runtime } from '../runtime.js'

/** How long a resume or a cancel waits for a call it cannot find yet: its process may not have seen its client leave. */
const FIND_WAIT_MS = 2_000
/** How long a cancel asked for elsewhere waits for that process to confirm it. */
const CANCEL_WAIT_MS = 3_000
/** How long a cancel request stays in the store for the running process to see. */
const CANCEL_TTL_MS = 60_000

function notFound(requestId: string): GatewayError {
  return new GatewayError('recovery_not_found', 'No running call or recovery record with this request_id (absent, expired or deleted).', {
    details: { request_id: shown(requestId) },
  })
}

/** The event number a resume starts after: `Last-Event-ID`, else `?after=`, else 0 (from the start). */
function resumePoint(ex: Exchange): number {
  const header = ex.req.headers['last-event-id']
  const text = typeof header === 'string' ? header.trim() : (ex.match.query.get('after') ?? '0')
  if (!/^\d{1,9}$/.test(text)) invalidField(typeof header === 'string' ? 'Last-Event-ID' : 'after', 'Must be an event number (0 or more).')
  return Number(text)
}

/**
 * `GET /v1/recoveries/{request_id}/stream`: the events of a stream after `Last-Event-ID` (or `?after=`), followed
 * live while the call runs, in this process or another sharing the store, or replayed from its record once kept. A
 * resume delivered to its end is noted on the record (`served_again_at`): the answer reached its client after all.
 */
export async function resumeStream(rt: Runtime, ex: Exchange, requestId: string): Promise<void> {
  const after = resumePoint(ex)
  if (!REQUEST_ID_PATTERN.test(requestId)) throw notFound(requestId)
  const { owner } = ex
  const sink = new ClientSink(ex.res, rt.clientDeadlines.write)
  // A call followed live may go quiet as long as its own client's stream would: its resumer gets keep-alives too.
  const following = (follow: Promise<void>) => {
    const release = rt.keepAlive?.hold(sink)
    return release ? follow.finally(release) : follow
  }
  const giveUpAt = Date.now() + FIND_WAIT_MS
  for (;;) {
    const live = rt.followable.get(owner, requestId)
    const log = live?.log
    if (log?.kept) {
      // In the framing its own client got (two framings may share a content type: Bedrock's InvokeModel and Converse).
      const framing = live?.operation === undefined ? DEFAULT_FRAMING : operationFraming(live.operation)
      sink.frameAs(framing)
      sink.open(streamHead({}, framing))
      noteServedAgain(rt, owner, requestId, sink)
      return following(followLog(log, after, sink))
    }
    const journal = await runningJournal(rt.store, owner, requestId)
    if (journal) {
      const framing = journalFraming(journal)
      sink.frameAs(framing)
      sink.open(streamHead({}, framing))
      noteServedAgain(rt, owner, requestId, sink)
      return following(followJournal(rt.store, owner, requestId, after, sink))
    }
    const record = await rt.store.get(owner, requestId)
    if (record) {
      const streamed = record.response.stream_raw
      if (streamed === undefined)
        invalidField('request_id', 'This recovery record is a whole response, not a stream: fetch it with GET /v1/recoveries/{request_id}.')
      const framing = operationFraming(record.request.endpoint)
      sink.frameAs(framing)
      sink.open(streamHead({}, framing))
      noteServedAgain(rt, owner, requestId, sink)
      await replayEventsAfter(sink, streamed, after, { seen: 0 })
      sink.end()
      return
    }
    if (Date.now() >= giveUpAt) throw notFound(requestId)
    await pause(JOURNAL_TICK_MS)
  }
}

/**
 * `POST /v1/recoveries/{request_id}/cancel`: stops a running call of the caller's, here or in another process
 * sharing the store (which keeps what was generated so far as a record with `interrupted_reason: "cancelled"`).
 */
export async function cancelCall(rt: Runtime, ex: Exchange, requestId: string): Promise<void> {
  if (!REQUEST_ID_PATTERN.test(requestId)) throw notFound(requestId)
  const { owner, res } = ex
  const answer = (cancelled: boolean, reason: string) => sendJson(res, 200, { request_id: requestId, cancelled, reason })
  let askedAt: number | undefined
  const giveUpAt = Date.now() + FIND_WAIT_MS
  for (;;) {
    const live = rt.followable.get(owner, requestId)
    if (live) {
      const already = live.cancelled
      live.cancel()
      return answer(!already, already ? 'already cancelled' : 'cancelled')
    }
    const head = parseJournalHead(await rt.store.getValue(owner, journalNames.head(requestId)))
    if (head?.state === 'running') {
      if (askedAt === undefined) {
        await rt.store.setValue(owner, journalNames.cancel(requestId), '1', CANCEL_TTL_MS)
        askedAt = Date.now()
      } else if (Date.now() - askedAt > CANCEL_WAIT_MS) return answer(true, 'cancel requested')
    } else if (head || askedAt !== undefined) return answer(askedAt !== undefined, askedAt !== undefined ? 'cancelled' : 'finished')
    else if (await rt.store.get(owner, requestId)) return answer(false, 'finished')
    else if (Date.now() >= giveUpAt) throw notFound(requestId)
    await pause(JOURNAL_TICK_MS)
  }
}
