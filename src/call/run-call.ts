import { performance } from 'node:perf_hooks'
import { GatewayError, isGatewayError } from '../errors.js'
import { collectBody } from '../http/collect-body.js'
import type { ClientSink, ResponseHead } from '../http/sink.js'
import { admitCall } from '../idempotency/admit.js'
import type { CallLease } from '../idempotency/lease.js'
import { callStartMessage } from '../observe/call-message.js'
import { type CallEndMessage, channels } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { StreamTail } from '../sse/tail.js'
import type { TokenCounts } from '../types.js'
import { upstreamFailure, upstreamTooLarge } from '../upstream/failure.js'
import type { ServedBy, UpstreamRequest, UpstreamResponse } from '../upstream/send.js'
import { type CallSpec, upstreamBodyFor } from './call-spec.js'
import { keepRecord } from './capture.js'
import { redactingSink } from './redacting-sink.js'
import { relay } from './relay.js'
import { tee } from './tee.js'
import { answerInClientTerms, translatingSink } from './translation.js'
import { NO_USAGE, usageOfBody } from './usage.js'

/** How a call ended, for the `call:end` message. */
interface CallOutcome {
  status: number
  delivered: boolean
  recovered: boolean
  usage: TokenCounts | undefined
  /** Which upstream model and key answered, once one did. */
  served?: ServedBy
  /** `CallEndMessage.error`. */
  error?: string
  firstChunkMs?: number
}

/** Status reported for a call whose client left before any response head was written. */
const CLIENT_GONE = 499
/** `CallEndMessage.error` of a call whose client left before its end. */
const CLIENT_DISCONNECTED = 'client_disconnected'

/**
 * Runs one model call: sends it upstream, relays or completes the response into the client's sink, keeps it as
 * a recovery record when the client left, and reports how it ended.
 */
export async function runCall(rt: Runtime, spec: CallSpec, client: ClientSink): Promise<void> {
  const admission = await admitCall(rt, spec, client)
  if (admission.served) return
  const { lease } = admission
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
    if (channels.callEnd.hasSubscribers) channels.callEnd.publish(endMessage(rt, spec, outcome))
  }
}

function upstreamRequest(spec: CallSpec, signal: AbortSignal | undefined, wholeBodyLimit?: number): UpstreamRequest {
  return {
    requestId: spec.requestId,
    model: spec.model,
    operation: spec.operation,
    stream: spec.stream,
    attempt: 1,
    body: spec.upstreamBody,
    signal,
    wholeBodyLimit,
    bodyFor: (model) => upstreamBodyFor(spec, model),
  }
}

const isAuthFailure = (response: UpstreamResponse) => response.statusCode === 401 || response.statusCode === 403

/** Reads a whole upstream body within `limits.maxResponseBytes` (a whole call's is read already), the gateway's own keys taken out. */
function readUpstreamBody(rt: Runtime, response: UpstreamResponse): Promise<Buffer> {
  const limit = rt.options.limits.maxResponseBytes
  const body = Buffer.isBuffer(response.body)
    ? Promise.resolve(response.body)
    : collectBody(response.body, {
        limit,
        afterOverflow: 'destroy',
        tooLarge: () => upstreamTooLarge(limit),
        broken: (cause) => upstreamFailure(cause),
      })
  return rt.redaction.active ? body.then((bytes) => rt.redaction.whole(bytes)) : body
}

/**
 * An upstream that refuses the gateway's own key is the operator's problem, not the client's: the client gets a
 * 502 it cannot mistake for its own wrong key, the operator an error line (never the key).
 */
async function refuseUpstreamAuthFailure(rt: Runtime, spec: CallSpec, response: UpstreamResponse): Promise<never> {
  await readUpstreamBody(rt, response).catch(() => undefined)
  rt.options.logger.error("model-gateway: the upstream refused the gateway's credentials", {
    requestId: spec.requestId,
    upstream: spec.model.upstream.name,
    model: spec.model.upstreamModel,
    status: response.statusCode,
  })
  throw new GatewayError('upstream_auth_failed', 'The gateway could not authenticate with the upstream model; its operator has been told.')
}

/** An upstream header passed down, keys taken out. */
function headerText(rt: Runtime, response: UpstreamResponse, name: string): string | undefined {
  const raw = response.headers[name]
  const value = Array.isArray(raw) ? raw[0] : raw
  return value === undefined || !rt.redaction.active ? value : rt.redaction.text(value)
}

/** Upstream headers a client plans its next calls by: its retry hint and rate-limit state. */
const PASSED_DOWN = /^(retry-after(-ms)?|x-ratelimit-[\w-]+)$/

/** Adds the upstream's retry and rate-limit headers, keys taken out. */
function passDown(rt: Runtime, response: UpstreamResponse, headers: Record<string, string | number>): Record<string, string | number> {
  for (const name of Object.keys(response.headers)) {
    if (!PASSED_DOWN.test(name)) continue
    const value = headerText(rt, response, name)
    if (value !== undefined) headers[name] = value
  }
  return headers
}

/** Headers of a whole response: its content type and length, the request id, and the upstream's rate-limit state. */
function wholeHead(rt: Runtime, response: UpstreamResponse, requestId: string, contentType: string, length: number): ResponseHead {
  const headers = { 'content-type': contentType, 'x-request-id': requestId, 'content-length': length }
  return { status: response.statusCode, headers: passDown(rt, response, headers) }
}

const isSuccess = (status: number) => status >= 200 && status < 300

/**
 * Answers a whole upstream response (in the client's format), to the client and to whoever joined the call, and hands
 * it to the lease, which keeps a 2xx answer where one was promised. `kept` settles when that is done.
 */
function completeWhole(
  rt: Runtime,
  spec: CallSpec,
  client: ClientSink,
  lease: CallLease | undefined,
  response: UpstreamResponse,
  upstreamBody: Buffer,
  defaultType: string,
): { contentType: string; body: Buffer; kept: Promise<void> | undefined } {
  const status = response.statusCode
  const { contentType, body } = spec.translation
    ? answerInClientTerms(spec.translation, status, upstreamBody)
    : { contentType: headerText(rt, response, 'content-type') ?? defaultType, body: upstreamBody }
  const head = wholeHead(rt, response, spec.requestId, contentType, body.length)
  client.complete(head, body)
  lease?.shared.complete(head, body)
  const kept = lease?.end({ kind: 'answer', answer: { requestId: spec.requestId, status, contentType, body } })
  return { contentType, body, kept }
}

/** A non-streaming call: the upstream call runs to its end even when the client leaves, so the answer can be kept. */
async function wholeCall(rt: Runtime, spec: CallSpec, client: ClientSink, lease: CallLease | undefined): Promise<CallOutcome> {
  // A process killed before the answer arrives loses it: this line lets an operator reconcile such calls.
  const { info } = rt.options.logger
  const stopNotice =
    info && spec.format.keepsRecords
      ? client.watch.onGone(() =>
          info.call(rt.options.logger, 'model-gateway: client left a non-streaming call; it goes on and its answer will be kept', {
            requestId: spec.requestId,
          }),
        )
      : undefined
  // Its retry may reach another process while this call runs: the lease tells the store then, and only then.
  const stopMarking = lease ? client.watch.onGone(() => lease.clientLeft()) : undefined
  let response: UpstreamResponse
  try {
    response = await rt.send(upstreamRequest(spec, undefined, rt.options.limits.maxResponseBytes))
  } finally {
    stopNotice?.()
    stopMarking?.()
  }
  if (isAuthFailure(response)) await refuseUpstreamAuthFailure(rt, spec, response)
  // Read whole already, unless an interceptor handed back a stream: no turn spent waiting on nothing.
  const upstreamBody = Buffer.isBuffer(response.body) && !rt.redaction.active ? response.body : await readUpstreamBody(rt, response)
  const status = response.statusCode
  const { contentType, body, kept } = completeWhole(rt, spec, client, lease, response, upstreamBody, 'application/json')
  const delivery = await client.watch.settled()
  await kept
  const served = response.served
  if (!isSuccess(status)) return { status, delivered: delivery.delivered, recovered: false, usage: undefined, served }
  const recovered =
    delivery.delivered || !spec.format.keepsRecords
      ? false
      : await keepRecord(rt, spec, { reason: delivery.reason, status, contentType, body })
  const usage = channels.callEnd.hasSubscribers ? (usageOfBody(spec.model.upstream.dialect, upstreamBody) ?? NO_USAGE) : undefined
  return { status, delivered: delivery.delivered, recovered, usage, served }
}

/** A streaming call: relayed chunk by chunk with backpressure, the upstream call aborted as soon as the client leaves. */
async function streamCall(rt: Runtime, spec: CallSpec, client: ClientSink, lease: CallLease | undefined): Promise<CallOutcome> {
  const controller = new AbortController()
  // Nobody left to read it: the stream is cancelled. Retries that joined it keep it going until they leave too.
  const stopWatching = client.watch.onGone(() => {
    if (lease && lease.shared.audience > 0) lease.shared.onEmpty(() => controller.abort())
    else controller.abort()
  })
  const gone = (status: number, error: string): CallOutcome => ({ status, delivered: false, recovered: false, usage: undefined, error })
  try {
    let response: UpstreamResponse
    try {
      response = await rt.send(upstreamRequest(spec, controller.signal))
    } catch (error) {
      if (controller.signal.aborted) return gone(CLIENT_GONE, CLIENT_DISCONNECTED)
      throw error
    }
    if (isAuthFailure(response)) await refuseUpstreamAuthFailure(rt, spec, response)
    const status = response.statusCode
    if (!isSuccess(status)) {
      // An error answers whole; a lease keeps nothing of a non-2xx answer.
      await completeWhole(rt, spec, client, lease, response, await readUpstreamBody(rt, response), 'text/event-stream').kept
      return { status, delivered: (await client.watch.settled()).delivered, recovered: false, usage: undefined, served: response.served }
    }
    const tail = channels.callEnd.hasSubscribers ? new StreamTail() : undefined
    // The client and whoever shares its answer get the client's format; the usage tail reads the upstream's.
    const shared = tee(client, lease ? [lease.shared] : [])
    const inClientTerms = spec.translation ? translatingSink(shared, spec.translation.translator.stream(spec.translation.plan)) : shared
    const fanned = tee(inClientTerms, tail ? [tail] : [])
    const sink = rt.redaction.active ? redactingSink(fanned, rt.redaction) : fanned
    const type = spec.translation ? 'text/event-stream' : (headerText(rt, response, 'content-type') ?? 'text/event-stream')
    const headers = { 'content-type': type, 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': spec.requestId }
    sink.open({ status, headers: passDown(rt, response, headers) })
    try {
      await relay(response.body, sink, client)
    } catch (error) {
      if (!controller.signal.aborted) {
        rt.options.logger.warn('model-gateway: upstream stream broke off', { requestId: spec.requestId, error: String(error) })
      }
      sink.abort(error as Error)
      await lease?.end({ kind: 'nothing' })
      return gone(status, controller.signal.aborted ? CLIENT_DISCONNECTED : 'upstream_stream_broken')
    }
    sink.end()
    await lease?.end({ kind: 'stream', status, contentType: type, requestId: spec.requestId })
    const { delivered } = await client.watch.settled()
    const usage = tail ? (tail.usage(spec.model.upstream.dialect) ?? NO_USAGE) : undefined
    const outcome: CallOutcome = { status, delivered, recovered: false, usage, served: response.served }
    if (tail?.firstChunkAt !== undefined) outcome.firstChunkMs = tail.firstChunkAt - spec.startedAt
    return outcome
  } finally {
    stopWatching()
  }
}

function endMessage(rt: Runtime, spec: CallSpec, outcome: CallOutcome): CallEndMessage {
  // The start message grown in place: a spread per call costs more than it reads.
  const message = callStartMessage(rt.id, spec) as CallEndMessage
  message.status = outcome.status
  message.delivered = outcome.delivered
  message.recovered = outcome.recovered
  message.durationMs = performance.now() - spec.startedAt
  if (outcome.usage) message.usage = outcome.usage
  if (outcome.served) {
    message.upstream = outcome.served.model.upstream.name
    if (outcome.served.keyAlias !== undefined) message.keyAlias = outcome.served.keyAlias
  }
  if (outcome.firstChunkMs !== undefined) message.firstChunkMs = outcome.firstChunkMs
  // A whole answer the client did not take is still an answer, kept or not: it left before the end.
  const error = outcome.error ?? (outcome.delivered || outcome.status >= 400 ? undefined : CLIENT_DISCONNECTED)
  if (error !== undefined) message.error = error
  return message
}
