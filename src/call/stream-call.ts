import { clientFraming } from '../dialects/framing/index.js'
import { withRequestId } from '../http/request-id.js'
import type { ClientSink, ResponseSink } from '../http/sink.js'
import type { CallLease } from '../idempotency/lease.js'
import { CLAIM_MARGIN_MS } from '../idempotency/lease.js'
import { channels } from '../observe/channels.js'
import { type FollowableCall, followableCall } from '../recovery/stream/followable-calls.js'
import { Journal, type JournalOptions } from '../recovery/stream/journal.js'
import type { StreamLog } from '../recovery/stream/stream-log.js'
import type { Runtime } from '../runtime.js'
import { StreamTail } from '../sse/tail.js'
import { type AbortHook, abortWith, type UpstreamResponse } from '../upstream/send.js'
import {
  CANCELLED,
  type CallOutcome,
  CLIENT_DISCONNECTED,
  CLIENT_GONE,
  cancelledError,
  clientLeftError,
  completeWhole,
  headerText,
  isAuthFailure,
  isSuccess,
  passDown,
  readUpstreamBody,
  refuseUpstreamAuthFailure,
  upstreamRequest,
} from './answer.js'
import { NO_USAGE } from './answer-facts.js'
import type { CallSpec } from './call-spec.js'
import { endCommitted, errorAsEvent } from './committed-stream.js'
import { keepStream } from './keep-record.js'
import { LATE_RESET_FROM_BYTES, watchStreamEnd } from './late-reset.js'
import { relay } from './relay.js'
import { buildStreamSinks } from './sink-stack.js'
import { boundedStreamLog, reportUnkeepable } from './stream-bounds.js'
import { StreamEnding } from './stream-sinks.js'
import { tee } from './tee.js'
import { reportDropped } from './translation.js'

/** The journal of one call, for `Journal`. */
export function journalOptions(rt: Runtime, spec: CallSpec, call: { stream: boolean; cancel: () => void }): JournalOptions {
  return {
    store: rt.store,
    owner: spec.owner,
    requestId: spec.requestId,
    operation: spec.operation,
    ttlMs: rt.options.timeouts.upstreamMs + CLAIM_MARGIN_MS,
    stream: call.stream,
    onCancel: call.cancel,
    onError: (error) =>
      rt.options.logger.warn('model-gateway: the journal of a call whose client left could not be written', {
        requestId: spec.requestId,
        error: String(error),
      }),
  }
}

/**
 * Whether a stream outlives its client and can be resumed: under `recovery.streams: 'finish'`, and always with an
 * `Idempotency-Key` (its client said it will come back).
 */
const isResumable = (rt: Runtime, spec: CallSpec) => spec.repeat.key !== undefined || rt.options.recovery.streams === 'finish'

/**
 * The headers of a stream of `type` in the client's dialect, with the request id, and the owner's rate-limit headers
 * (a head a keep-alive commits before the upstream answers has only these to tell of them).
 */
function streamHeaders(spec: CallSpec, type: string): Record<string, string | number> {
  const headers = withRequestId({ ...clientFraming(spec.format).headers, 'content-type': type }, spec.inbound, spec.requestId)
  return spec.limitHeaders ? Object.assign(headers, spec.limitHeaders) : headers
}

/**
 * The parts of a resumable stream: its log and its entry among the live calls; the journal once its client left;
 * whether the late-reset watch took its log over (it then releases it).
 */
interface Resumable {
  log: StreamLog
  live: FollowableCall
  journal: Journal | undefined
  watched: boolean
}

/**
 * A streaming call, relayed chunk by chunk with backpressure. A plain stream is aborted as soon as its client leaves;
 * a resumable one numbers its events, runs to its end, journals itself for other processes once its client left,
 * and is kept as a recovery record when it was not delivered (or cancelled on purpose).
 */
export async function streamCall(rt: Runtime, spec: CallSpec, client: ClientSink, lease: CallLease | undefined): Promise<CallOutcome> {
  // A stop is rare: a hook, not an AbortSignal (which every stream would pay for).
  const stop: AbortHook = {}
  let resumable: Resumable | undefined
  if (isResumable(rt, spec)) {
    const log = boundedStreamLog(rt, spec)
    // Outgrown after its client left: nothing is gained by finishing it.
    log.onOverflow(() => {
      if (!client.watch.clientGone) return
      reportUnkeepable(rt, spec)
      abortWith(stop, clientLeftError())
    })
    // A retry that joins replays from the log: one copy of the stream, not two.
    lease?.shared.replayFrom(log)
    const live = followableCall(spec.owner, spec.requestId, log, () => abortWith(stop, cancelledError()), spec.operation)
    rt.followable.add(live)
    resumable = { log, live, journal: undefined, watched: false }
  }
  // Held from before the upstream call: a model that thinks for minutes keeps its client's connection open.
  let release: (() => void) | undefined
  if (rt.keepAlive) {
    const ahead = { status: 200, headers: streamHeaders(spec, clientFraming(spec.format).contentType) }
    client.headAhead(ahead)
    // A retry that joins before the upstream answered waits as long: it is kept alive behind the same head.
    lease?.shared.headAhead(ahead)
    release = rt.keepAlive.hold(client)
  }
  const stopWatching = client.watch.onGone(() => {
    if (resumable) {
      const { log, live } = resumable
      // A stream too long to keep cannot be resumed or recovered: nothing is gained by finishing it.
      if (!log.kept) {
        reportUnkeepable(rt, spec)
        return abortWith(stop, clientLeftError())
      }
      // Its SDK retry may reach another process while it runs: the lease tells the store then, as a whole call's does.
      lease?.clientLeft()
      // Only other processes read a journal: the default in-memory store is this process's alone.
      if (!rt.store.shared) return
      resumable.journal = new Journal(journalOptions(rt, spec, { stream: true, cancel: () => live.cancel() }), log.chunks())
      log.subscribe(resumable.journal)
      return
    }
    // Nobody left to read it: the stream is cancelled. Retries that joined it keep it going until they leave too.
    if (lease && lease.shared.audience > 0) lease.shared.onEmpty(() => abortWith(stop, clientLeftError()))
    else abortWith(stop, clientLeftError())
  })
  try {
    return await relayStream(rt, spec, client, lease, stop, resumable)
  } finally {
    release?.()
    stopWatching()
    if (resumable) {
      rt.followable.remove(resumable.live)
      if (!resumable.watched) resumable.log.release()
    }
  }
}

async function relayStream(
  rt: Runtime,
  spec: CallSpec,
  client: ClientSink,
  lease: CallLease | undefined,
  stop: AbortHook,
  resumable: Resumable | undefined,
): Promise<CallOutcome> {
  const gone = async (status: number, error: string): Promise<CallOutcome> => {
    await resumable?.journal?.finish('failed')
    return { status, delivered: false, recovered: false, usage: undefined, error }
  }
  let response: UpstreamResponse
  try {
    response = await rt.send(upstreamRequest(spec, { hook: stop }))
  } catch (error) {
    if (stop.reason) return gone(CLIENT_GONE, resumable?.live.cancelled ? CANCELLED : CLIENT_DISCONNECTED)
    await resumable?.journal?.finish('failed')
    throw endCommitted(spec, client, error)
  }
  if (isAuthFailure(response)) {
    await refuseUpstreamAuthFailure(rt, spec, response).catch((error) => {
      throw endCommitted(spec, client, error)
    })
  }
  const status = response.statusCode
  if (!isSuccess(status)) {
    const body = await readUpstreamBody(rt, response).catch((error) => {
      throw endCommitted(spec, client, error)
    })
    // An error answers whole, or as the last event of a stream a keep-alive committed; a lease keeps nothing of it.
    const to = client.openedEarly ? errorAsEvent(spec, client) : client
    await completeWhole(rt, spec, to, lease, response, body, clientFraming(spec.format).contentType).kept
    await resumable?.journal?.finish('failed')
    return { status, delivered: (await client.watch.settled()).delivered, recovered: false, usage: undefined, served: response.served }
  }
  // Usage is read for subscribers, and for a ledger that charges what a call used.
  const tail = channels.callEnd.hasSubscribers || rt.ledger ? new StreamTail() : undefined
  const ending = new StreamEnding(spec)
  const brokenEvent = () => ending.broken()
  const lastEvent = () => (resumable?.live.cancelled ? ending.cancelled() : ending.broken())
  // Translated by the model that answered: a fallback may speak another format than the model asked for.
  const { served } = response
  const translation = spec.bodies.translationFor(served.model)
  const sink = buildStreamSinks({
    client,
    sharers: lease ? [lease.shared] : [],
    resumable: resumable && { log: resumable.log, lastEvent },
    brokenEvent,
    seen: ending.seen,
    translation: translation?.translator.stream(translation.plan),
    tail: withCapture(tail, spec.capture?.stream(headerText(rt, response, 'content-type'), served)),
    redaction: rt.redaction.active ? rt.redaction : undefined,
    askedUsage: !translation && spec.bodies.usageAskedFor(served.model) ? spec.format.askedUsage?.strip : undefined,
  })
  const framing = clientFraming(spec.format)
  const framed = framing.contentType
  // A framing with a writer of its own (an event stream) is what goes out, whatever the upstream's SSE said.
  const type = translation || framing.writer ? framed : (headerText(rt, response, 'content-type') ?? framed)
  const headers = streamHeaders(spec, type)
  reportDropped(rt.options.logger, spec.requestId, translation, headers)
  sink.open({ status, headers: passDown(rt, spec, response, headers) })
  let broken = false
  try {
    await relay(response.body, sink, client, { pastClient: resumable !== undefined })
    sink.end()
  } catch (error) {
    broken = true
    if (!stop.reason) {
      rt.options.logger.warn('model-gateway: upstream stream broke off', { requestId: spec.requestId, error: String(error) })
    }
    sink.abort(error as Error)
  }
  await lease?.end(broken ? { kind: 'nothing' } : { kind: 'stream', status, contentType: type, requestId: spec.requestId })
  const delivery = await client.watch.settled()
  // Handed on is not read, for a stream's last frames as for a whole answer (see `LATE_RESET_FROM_BYTES`).
  const unconfirmed = delivery.delivered && !broken && client.sent >= LATE_RESET_FROM_BYTES
  const outcome: CallOutcome = { status, delivered: delivery.delivered, unconfirmed, recovered: false, usage: undefined, served }
  if (tail) {
    const facts = tail.read(served.model.upstream.dialect)
    outcome.usage = facts.usage ?? NO_USAGE
    if (facts.finishReasons) outcome.finishReasons = facts.finishReasons
  }
  if (tail?.firstChunkAt !== undefined) outcome.firstChunkMs = tail.firstChunkAt - spec.startedAt
  // A cancel that came after the last event stopped nothing.
  const cancelled = broken && resumable?.live.cancelled === true
  if (broken) {
    outcome.error = cancelled ? CANCELLED : stop.reason ? CLIENT_DISCONNECTED : 'upstream_stream_broken'
    outcome.incomplete = true
  }
  // A cancel can reach the gateway before it sees the client leave: the cut stream then looks delivered, yet it was
  // stopped on purpose and is kept all the same.
  if (resumable && (cancelled || !delivery.delivered) && resumable.log.kept) {
    // Kept before the journal says it is done, so a resumer elsewhere that sees the end finds the record.
    outcome.recovered = await keepStream(rt, spec, translation?.plan, resumable.log, {
      reason: cancelled || delivery.delivered ? CANCELLED : delivery.reason,
      status,
    })
  }
  // Its events are still here: a reset before the client sends anything more keeps it as a cut stream is kept.
  if (resumable && !broken && delivery.delivered && resumable.log.kept) {
    resumable.watched = watchStreamEnd(rt, spec, client, resumable.log, { plan: translation?.plan, status })
  }
  await resumable?.journal?.finish('done')
  return outcome
}

/** The tail, and beside it the sink a capture takes the stream with (the response cache's), when there is one. */
function withCapture(tail: StreamTail | undefined, captured: ResponseSink | undefined): ResponseSink | undefined {
  if (!captured) return tail
  return tail ? tee(tail, [captured]) : captured
}
