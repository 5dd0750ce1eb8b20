import { performance } from 'node:perf_hooks'
import { isGatewayError } from '../errors.js'
import type { ClientSink } from '../http/sink.js'
import { admitCall, mayBeRepeated } from '../idempotency/admit.js'
import type { CallLease } from '../idempotency/lease.js'
import { callStartMessage, statusSent } from '../observe/call-message.js'
import { type CallEndMessage, channels } from '../observe/channels.js'
import { type FollowableCall, followableCall } from '../recovery/stream/followable-calls.js'
import { Journal } from '../recovery/stream/journal.js'
import type { Runtime } from '../runtime.js'
import { type AbortHook, abortWith, type UpstreamResponse } from '../upstream/send.js'
import {
  type CallOutcome,
  CLIENT_DISCONNECTED,
  cancelledError,
  completeWhole,
  headerText,
  isAuthFailure,
  isSuccess,
  readUpstreamBody,
  refuseUpstreamAuthFailure,
  upstreamRequest,
} from './answer.js'
import { factsOfBody, NO_USAGE, usageOfBody } from './answer-facts.js'
import type { CallSpec } from './call-spec.js'
import { keepRecord } from './keep-record.js'
import { LATE_RESET_FROM_BYTES } from './late-reset.js'
import { admitUpstream, settleUpstream } from './metering.js'
import { journalOptions, streamCall } from './stream-call.js'

/**
 * Runs one model call: sends it upstream, relays or completes the response into the client's sink, keeps it as
 * a recovery record when the client left, and reports how it ended.
 */
export async function runCall(rt: Runtime, spec: CallSpec, client: ClientSink): Promise<void> {
  let lease: CallLease | undefined
  // A request that cannot be a repeat skips admission: not even a promise turn on the plain path.
  if (mayBeRepeated(rt, spec)) {
    const admission = await admitCall(rt, spec, client)
    if (admission.served) return
    lease = admission.lease
  }
  const charged = rt.ledger ? await admitUpstream(rt, spec, lease) : undefined
  if (channels.callStart.hasSubscribers) channels.callStart.publish(callStartMessage(rt.id, spec))
  let outcome: CallOutcome = { status: 500, delivered: false, recovered: false, usage: undefined }
  try {
    outcome = spec.stream ? await streamCall(rt, spec, client, lease) : await wholeCall(rt, spec, client, lease)
  } catch (error) {
    // The dispatcher answers a thrown error with its status; calls that joined this one get the same error.
    outcome.status = isGatewayError(error) ? (error.status ?? 500) : 500
    outcome.error = isGatewayError(error) ? error.code : 'internal_error'
    await lease?.fail(error)
    throw error
  } finally {
    settleUpstream(rt, spec, outcome, charged)
    if (channels.callEnd.hasSubscribers) channels.callEnd.publish(endMessage(rt, spec, outcome))
  }
}

/**
 * What a whole call does once its client left: it becomes cancellable here by its request id, and its journal
 * head tells other processes it runs (and carries a cancel asked for there). Nothing of this while the client stays.
 */
function whenClientLeaves(rt: Runtime, spec: CallSpec, hook: AbortHook): { live: FollowableCall; journal: Journal } {
  const live = followableCall(spec.owner, spec.requestId, undefined, () => abortWith(hook, cancelledError()))
  rt.followable.add(live)
  const journal = new Journal(journalOptions(rt, spec, { stream: false, cancel: () => live.cancel() }))
  return { live, journal }
}

/** A non-streaming call: the upstream call runs to its end even when the client leaves, so the answer can be kept. */
async function wholeCall(rt: Runtime, spec: CallSpec, client: ClientSink, lease: CallLease | undefined): Promise<CallOutcome> {
  const hook: AbortHook = {}
  let left: { live: FollowableCall; journal: Journal } | undefined
  const stopWatching = client.watch.onGone(() => {
    // A process killed before the answer arrives loses it: this line lets an operator reconcile such calls.
    if (spec.format.keepsRecords) {
      rt.options.logger.info?.('model-gateway: client left a non-streaming call; it goes on and its answer will be kept', {
        requestId: spec.requestId,
      })
      // Its record is likely now: the hash it needs is taken while the upstream works, not after the answer.
      void spec.requestHash()
    }
    // Its retry may reach another process while this call runs: the lease tells the store then, and only then.
    lease?.clientLeft()
    left = whenClientLeaves(rt, spec, hook)
  })
  let response: UpstreamResponse
  try {
    response = await rt.send(upstreamRequest(spec, { hook, wholeBodyLimit: rt.options.limits.maxResponseBytes }))
  } catch (error) {
    await left?.journal.finish('failed')
    throw error
  } finally {
    stopWatching()
    if (left) rt.followable.remove(left.live)
  }
  // Its journal goes while the answer is read and kept: a store round trip that need not come first.
  const journalDone = left?.journal.finish('done')
  if (isAuthFailure(response)) await refuseUpstreamAuthFailure(rt, spec, response)
  // Read whole already, unless an interceptor handed back a stream: no turn spent waiting on nothing.
  const upstreamBody = Buffer.isBuffer(response.body) && !rt.redaction.active ? response.body : await readUpstreamBody(rt, response)
  const status = response.statusCode
  const { contentType, body, kept } = completeWhole(rt, spec, client, lease, response, upstreamBody, 'application/json')
  const delivery = await client.watch.settled()
  if (kept) await kept
  const { served } = response
  spec.capture?.whole(status, headerText(rt, response, 'content-type'), upstreamBody, served)
  if (!isSuccess(status)) return { status, delivered: delivery.delivered, recovered: false, usage: undefined, served }
  const recovered =
    delivery.delivered || !spec.format.keepsRecords
      ? false
      : await keepRecord(rt, spec, { reason: delivery.reason, status, contentType, body })
  // Handed on is not read: a client whose own timeout fires as the answer reaches its buffers resets without
  // reading it, whatever its size, so every answer's connection is watched, one watch per connection. A large one
  // can sit unread past the watch, where a reset is not seen: its delivery stays unconfirmed.
  const unconfirmed = delivery.delivered && body.length >= LATE_RESET_FROM_BYTES
  if (delivery.delivered && spec.format.keepsRecords) watchLateReset(rt, spec, client, { status, contentType, body })
  if (journalDone) await journalDone
  const outcome: CallOutcome = { status, delivered: delivery.delivered, unconfirmed, recovered, usage: undefined, served }
  if (channels.callEnd.hasSubscribers) {
    const facts = factsOfBody(served.model.upstream.dialect, upstreamBody)
    outcome.usage = facts.usage ?? NO_USAGE
    if (facts.finishReasons) outcome.finishReasons = facts.finishReasons
  } else if (rt.ledger) outcome.usage = usageOfBody(served.model.upstream.dialect, upstreamBody) ?? NO_USAGE
  return outcome
}

/**
 * Keeps a whole answer that looked delivered when its client resets the connection soon after, before sending
 * anything more: the kernel took the bytes, the client never read them all. The call has already ended (its
 * `call:end` says `delivery: 'unconfirmed'`); the record and a log line are what tell of it. Never rejects.
 */
function watchLateReset(
  rt: Runtime,
  spec: CallSpec,
  client: ClientSink,
  answer: { status: number; contentType: string; body: Buffer },
): void {
  // A listener rather than a promise: every whole answer is watched, and almost none is reset.
  client.watch.onLateReset(rt.clientDeadlines.lateReset, (late) => {
    if (late && !late.delivered) void keepLateAnswer(rt, spec, late.reason, answer)
  })
}

/** Keeps a whole answer lost to a late reset, as `watchLateReset` says. Never rejects. */
async function keepLateAnswer(
  rt: Runtime,
  spec: CallSpec,
  reason: string,
  answer: { status: number; contentType: string; body: Buffer },
): Promise<void> {
  try {
    rt.options.logger.info?.('model-gateway: client reset the connection after the answer was handed on; it will be kept', {
      requestId: spec.requestId,
    })
    await keepRecord(rt, spec, { reason, ...answer })
  } catch (error) {
    rt.options.logger.error('model-gateway: recovery record could not be stored', { requestId: spec.requestId, error: String(error) })
  }
}

/** The `call:end` message of a call: its start message grown with how it ended. */
export function endMessage(rt: Runtime, spec: CallSpec, outcome: CallOutcome): CallEndMessage {
  // The start message grown in place: a spread per call costs more than it reads.
  const message = callStartMessage(rt.id, spec) as CallEndMessage
  message.status = statusSent(spec, outcome.status, outcome.served?.model)
  message.delivered = outcome.delivered
  message.delivery = outcome.delivered ? (outcome.unconfirmed ? 'unconfirmed' : 'delivered') : 'undelivered'
  message.recovered = outcome.recovered
  message.durationMs = performance.now() - spec.startedAt
  if (outcome.usage) {
    message.usage = outcome.usage
    message.complete = outcome.incomplete !== true
    if (outcome.cost !== undefined) message.cost = outcome.cost
  }
  if (outcome.finishReasons) message.finishReasons = outcome.finishReasons
  if (outcome.served) {
    message.upstream = outcome.served.model.upstream.name
    if (outcome.served.keyAlias !== undefined) message.keyAlias = outcome.served.keyAlias
  }
  if (outcome.firstChunkMs !== undefined) message.firstChunkMs = outcome.firstChunkMs
  if (spec.cache) message.cache = spec.cache
  // A whole answer the client did not take is still an answer, kept or not: it left before the end.
  const error = outcome.error ?? (outcome.delivered || outcome.status >= 400 ? undefined : CLIENT_DISCONNECTED)
  if (error !== undefined) message.error = error
  return message
}
