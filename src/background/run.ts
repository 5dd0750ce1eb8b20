// A background call run by the gateway itself: the client's request rewritten as a plain stream, sent upstream
// through the same interceptors as any call (fallbacks, circuit, keys), translated where the model speaks another
// format, and its events kept by id instead of relayed to a client.
import type { Readable } from 'node:stream'
import { type CallOutcome, isAuthFailure, isSuccess, readUpstreamBody, refuseUpstreamAuthFailure, upstreamRequest } from '../call/answer.js'
import { NO_USAGE } from '../call/answer-facts.js'
import type { CallSpec } from '../call/call-spec.js'
import { settleUpstream } from '../call/metering.js'
import { endMessage } from '../call/run-call.js'
import { buildStreamSinks } from '../call/sink-stack.js'
import { StreamEnding } from '../call/stream-sinks.js'
import { isGatewayError } from '../errors.js'
import type { ResponseSink } from '../http/sink.js'
import type { LedgerEntry } from '../ledger/ledger.js'
import { callStartMessage } from '../observe/call-message.js'
import { channels } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { eventData } from '../sse/parse.js'
import { EventSplitter } from '../sse/split.js'
import { StreamTail } from '../sse/tail.js'
import type { UpstreamResponse } from '../upstream/send.js'
import type { RunLog } from './run-log.js'

/** What a background call's last state says when its upstream's stream ended without saying how the response did. */
const UNFINISHED_MESSAGE = 'The upstream stream ended before the response was complete.'

/** The message an upstream's error body carries (`error.message` in every dialect), or a plain one. */
function upstreamErrorMessage(status: number, body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown } }
    const message = parsed?.error?.message
    if (typeof message === 'string' && message !== '') return `The upstream answered ${status}: ${message}`
  } catch {
    // Not JSON: the status alone says what is known.
  }
  return `The upstream answered ${status}.`
}

/** The sink the upstream's events (in the client's format, after translation) are kept through. */
function keepingSink(run: RunLog): ResponseSink {
  const splitter = new EventSplitter()
  const { format, id } = run.who
  return {
    complete: () => {},
    open: () => run.start(),
    write(chunk) {
      for (const event of splitter.push(chunk)) {
        for (const data of eventData(event.toString('utf8'))) {
          let parsed: unknown
          try {
            parsed = JSON.parse(data)
          } catch {
            continue
          }
          if (typeof parsed !== 'object' || parsed === null) continue
          const kept = format.event(parsed as Record<string, unknown>, id)
          if (!kept) continue
          // The error event a stopped stream ends with says it broke: the reason it was stopped is the truer end.
          const stopped = run.stopReason
          if (stopped && kept.ending) {
            void run.end(stopped.status, undefined, stopped.message)
            continue
          }
          run.append(kept.event)
          if (kept.ending) void run.end(kept.ending.status, kept.ending.object, kept.ending.message)
        }
      }
      return true
    },
    end: () => void run.end('failed', undefined, UNFINISHED_MESSAGE),
    abort: (error) => void run.end(run.stopReason?.status ?? 'failed', undefined, run.stopReason?.message ?? error.message),
  }
}

/** Pipes an upstream body into a sink; nobody sets the pace, so it never pauses. */
function pipe(body: Readable | Buffer, sink: ResponseSink): Promise<void> {
  if (Buffer.isBuffer(body)) {
    sink.write(body)
    return Promise.resolve()
  }
  return new Promise((resolve, reject) => {
    body.on('data', (chunk: Buffer) => sink.write(chunk))
    body.once('end', () => resolve())
    body.once('error', reject)
  })
}

/**
 * Runs a background call to its end; never rejects. Reports it once on `call:end`, as any call (one usage event), and
 * settles it with the ledger that admitted it (`entry`), as any call that went upstream.
 */
export async function runInBackground(rt: Runtime, spec: CallSpec, run: RunLog, entry: LedgerEntry | undefined): Promise<void> {
  if (channels.callStart.hasSubscribers) channels.callStart.publish(callStartMessage(rt.id, spec))
  const relayed = await relayToLog(rt, spec, run).catch((error: unknown) => {
    const message = isGatewayError(error) ? error.message : 'The gateway failed to run this response.'
    if (!isGatewayError(error))
      rt.options.logger.error('model-gateway: a background response failed', { requestId: spec.requestId, error: String(error) })
    const stopped = run.stopReason
    void run.end(stopped?.status ?? 'failed', undefined, stopped?.message ?? message)
    return { status: isGatewayError(error) ? (error.status ?? 500) : 500, served: undefined, tail: undefined }
  })
  await run.ended
  const outcome: CallOutcome = { status: relayed.status, delivered: true, recovered: false, usage: undefined, served: relayed.served }
  const { tail, served } = relayed
  const finished = run.status === 'completed' || run.status === 'incomplete'
  if (tail && served) {
    const facts = tail.read(served.model.upstream.dialect)
    outcome.usage = facts.usage ?? NO_USAGE
    if (facts.finishReasons) outcome.finishReasons = facts.finishReasons
    if (tail.firstChunkAt !== undefined) outcome.firstChunkMs = tail.firstChunkAt - spec.startedAt
    // Stopped before its upstream finished (cancelled, or cut): charged what is known, at least its reservation.
    if (!finished) outcome.incomplete = true
  }
  if (!finished) outcome.error = run.status
  settleUpstream(rt, spec, outcome, entry)
  if (channels.callEnd.hasSubscribers) channels.callEnd.publish(endMessage(rt, spec, outcome))
}

interface Relayed {
  status: number
  served: UpstreamResponse['served'] | undefined
  tail: StreamTail | undefined
}

async function relayToLog(rt: Runtime, spec: CallSpec, run: RunLog): Promise<Relayed> {
  const response = await rt.send(upstreamRequest(spec, { hook: run.hook }))
  const status = response.statusCode
  const { served } = response
  if (isAuthFailure(response)) await refuseUpstreamAuthFailure(rt, spec, response)
  if (!isSuccess(status)) {
    const body = await readUpstreamBody(rt, response)
    await run.end('failed', undefined, upstreamErrorMessage(status, body))
    return { status, served, tail: undefined }
  }
  // Usage is read for subscribers, and for a ledger that charges what a call used.
  const tail = channels.callEnd.hasSubscribers || rt.ledger ? new StreamTail() : undefined
  const ending = new StreamEnding(spec)
  const translation = spec.bodies.translationFor(served.model)
  const sink = buildStreamSinks({
    client: keepingSink(run),
    sharers: [],
    brokenEvent: () => ending.broken(),
    seen: ending.seen,
    translation: translation?.translator.stream(translation.plan),
    tail,
    redaction: rt.redaction.active ? rt.redaction : undefined,
  })
  sink.open({ status, headers: {} })
  try {
    await pipe(response.body, sink)
    sink.end()
  } catch (error) {
    sink.abort(error as Error)
  }
  return { status, served, tail }
}
