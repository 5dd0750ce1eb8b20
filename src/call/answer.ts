import { GatewayError } from '../errors.js'
import { collectBody } from '../http/collect-body.js'
import { withRequestId } from '../http/request-id.js'
import type { ResponseHead, ResponseSink } from '../http/sink.js'
import type { CallLease } from '../idempotency/lease.js'
import type { Runtime } from '../runtime.js'
import type { TokenCounts } from '../types.js'
import { upstreamFailure, upstreamTooLarge } from '../upstream/failure.js'
import { retryAfterMs } from '../upstream/response.js'
import type { AbortHook, ServedBy, UpstreamRequest, UpstreamResponse } from '../upstream/send.js'
import type { CallSpec, Translation } from './call-spec.js'
import { answerInClientTerms, reportDropped } from './translation.js'

/** How a call ended, for the `call:end` message. */
export interface CallOutcome {
  status: number
  delivered: boolean
  /** Delivered as far as Node could tell, but a client can still have lost part of it unseen (`CallEndMessage.delivery`). */
  unconfirmed?: boolean
  recovered: boolean
  usage: TokenCounts | undefined
  /** False when the upstream never finished a 2xx answer (a stream broken off or cancelled). @default true */
  incomplete?: boolean
  /** `CallEndMessage.cost`. */
  cost?: number
  /** `CallEndMessage.finishReasons`. */
  finishReasons?: string[]
  /** Which upstream model and key answered, once one did. */
  served?: ServedBy
  /** `CallEndMessage.error`. */
  error?: string
  firstChunkMs?: number
}

/** Status reported for a call whose client left before any response head was written. */
export const CLIENT_GONE = 499
/** `CallEndMessage.error` of a call whose client left before its end. */
export const CLIENT_DISCONNECTED = 'client_disconnected'
/** `CallEndMessage.error` and `interrupted_reason` of a call stopped through the cancel endpoint. */
export const CANCELLED = 'cancelled'

/** The upstream request of a call, stopped through `hook`; a whole call's answer is read whole up to `wholeBodyLimit`. */
export function upstreamRequest(spec: CallSpec, abort: { hook: AbortHook; wholeBodyLimit?: number }): UpstreamRequest {
  return {
    requestId: spec.requestId,
    model: spec.model,
    operation: spec.bodies.operationFor(spec.model),
    stream: spec.stream,
    attempt: 1,
    body: spec.upstreamBody,
    abortHook: abort.hook,
    wholeBodyLimit: abort.wholeBodyLimit,
    dialectHeaders: spec.bodies.headersFor(spec.model),
    attemptFor: (model) => {
      const body = spec.bodies.for(model)
      return Buffer.isBuffer(body)
        ? { body, operation: spec.bodies.operationFor(model), dialectHeaders: spec.bodies.headersFor(model) }
        : body
    },
    // Present from the start, so every request has one shape whether or not an interceptor sets them.
    key: undefined,
    headers: undefined,
  }
}

/** An upstream that refused the gateway's own key. */
export const isAuthFailure = (response: UpstreamResponse) => response.statusCode === 401 || response.statusCode === 403

/** Whether an upstream status is a 2xx answer (what is kept, replayed and reported as usage). */
export const isSuccess = (status: number) => status >= 200 && status < 300

/** Reads a whole upstream body within `limits.maxResponseBytes` (a whole call's is read already), the gateway's own keys taken out. */
export function readUpstreamBody(rt: Runtime, response: UpstreamResponse): Promise<Buffer> {
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
export async function refuseUpstreamAuthFailure(rt: Runtime, spec: CallSpec, response: UpstreamResponse): Promise<never> {
  const body = await readUpstreamBody(rt, response).catch(() => undefined)
  const { model } = response.served
  // A token revoked or expired early upstream: the next call fetches another rather than send it again.
  model.upstream.authorizer?.refused?.()
  // The upstream's own reason where it gives one (a signature refused, a clock off, a key unknown): never a secret.
  const cause = body && model.upstream.dialect.upstreamErrors?.cause(response.headers, body)
  rt.options.logger.error("model-gateway: the upstream refused the gateway's credentials", {
    requestId: spec.requestId,
    upstream: model.upstream.name,
    model: model.upstreamModel,
    status: response.statusCode,
    ...(cause === undefined ? {} : { cause }),
  })
  throw new GatewayError('upstream_auth_failed', 'The gateway could not authenticate with the upstream model; its operator has been told.')
}

/** An upstream header passed down, keys taken out. */
export function headerText(rt: Runtime, response: UpstreamResponse, name: string): string | undefined {
  const raw = response.headers[name]
  const value = Array.isArray(raw) ? raw[0] : raw
  return value === undefined || !rt.redaction.active ? value : rt.redaction.text(value)
}

/** Upstream headers a client plans its next calls by: its retry hint and rate-limit state. */
const PASSED_DOWN = /^(retry-after(-ms)?|x-ratelimit-[\w-]+)$/

/** `PASSED_DOWN.test(name)`, told by the name's start first: most of an answer's headers are neither, and a call tests each. */
function passedDown(name: string): boolean {
  const first = name.charCodeAt(0)
  if (first === 0x72) return name === 'retry-after' || name === 'retry-after-ms'
  return first === 0x78 && name.startsWith('x-ratelimit-') && PASSED_DOWN.test(name)
}

/** The upstream's rate-limit state: the gateway's own key's, which an owner with limits is not told. */
const UPSTREAM_LIMITS = /^x-ratelimit-/

/**
 * Adds the upstream's retry and rate-limit headers, keys taken out; for an owner with limits, the owner's rate-limit
 * headers instead of the upstream's (the upstream's limits are the gateway's key's, not the owner's).
 */
export function passDown(
  rt: Runtime,
  spec: CallSpec,
  response: UpstreamResponse,
  headers: Record<string, string | number>,
): Record<string, string | number> {
  const own = spec.limitHeaders
  for (const name of Object.keys(response.headers)) {
    if (!passedDown(name) || (own && UPSTREAM_LIMITS.test(name))) continue
    const value = headerText(rt, response, name)
    if (value !== undefined) headers[name] = value
  }
  if (own) Object.assign(headers, own)
  return headers
}

/**
 * The wait in whole seconds an upstream's 429 asked for other than in `retry-after`: in `retry-after-ms`, or in its
 * body (Google's `RetryInfo`); else 1 s, as the gateway's own 429s say.
 */
function waitSeconds(response: UpstreamResponse, body: Buffer): string {
  const ms = retryAfterMs(response.headers) ?? response.served.model.upstream.dialect.errorRetryAfterMs?.(body)
  return String(ms === undefined ? 1 : Math.max(1, Math.ceil(ms / 1000)))
}

/**
 * Headers of a whole response: its status, content type and length, the request id, the upstream's rate-limit state
 * (a 429 with `retry-after` for a client whose API always sends one), and the hint fields a translation dropped.
 */
function wholeHead(
  rt: Runtime,
  response: UpstreamResponse,
  status: number,
  spec: CallSpec,
  answer: { contentType: string; length: number; translation: Translation | undefined; upstreamBody: Buffer },
): ResponseHead {
  const headers: Record<string, string | number> = withRequestId(
    { 'content-type': answer.contentType, 'content-length': answer.length },
    spec.inbound,
    spec.requestId,
  )
  reportDropped(rt.options.logger, spec.requestId, answer.translation, headers)
  passDown(rt, spec, response, headers)
  // An error's kind, for a client dialect that reads it from a header (Bedrock's `x-amzn-errortype`), by its status.
  if (!isSuccess(status) && spec.inbound.errorHeaders)
    Object.assign(headers, spec.inbound.errorHeaders({ status, code: 'upstream_error', message: '', param: undefined }))
  if (status === 429 && spec.inbound.retryAfterOn429 && headers['retry-after'] === undefined)
    headers['retry-after'] = waitSeconds(response, answer.upstreamBody)
  return { status, headers }
}

/**
 * Answers a whole upstream response (in the client's format), to the client and to whoever joined the call, and hands
 * it to the lease, which keeps a 2xx answer where one was promised. `kept` settles when that is done.
 */
export function completeWhole(
  rt: Runtime,
  spec: CallSpec,
  client: ResponseSink,
  lease: CallLease | undefined,
  response: UpstreamResponse,
  upstreamBody: Buffer,
  defaultType: string,
): { contentType: string; body: Buffer; kept: Promise<void> | undefined } {
  const status = response.statusCode
  // In the terms of the model that answered: a fallback may speak another format than the model asked for.
  const translation = spec.bodies.translationFor(response.served.model)
  let { contentType, body } = translation
    ? answerInClientTerms(translation, status, upstreamBody)
    : { contentType: headerText(rt, response, 'content-type') ?? defaultType, body: upstreamBody }
  // A translated error goes out with the status its body names, where the client's format names only some.
  let sent = translation && !isSuccess(status) ? (spec.inbound.errorStatus?.(status) ?? status) : status
  // A client variant takes errors in its own shape, whatever format its route speaks (Bedrock's InvokeModel clients).
  const relayed = isSuccess(status) ? undefined : spec.inbound.relayedError?.(sent, body)
  if (relayed) ({ status: sent, body, contentType } = { ...relayed, contentType: 'application/json' })
  const head = wholeHead(rt, response, sent, spec, { contentType, length: body.length, translation, upstreamBody })
  if (relayed) Object.assign(head.headers, relayed.headers)
  client.complete(head, body)
  lease?.shared.complete(head, body)
  const kept = lease?.end({ kind: 'answer', answer: { requestId: spec.requestId, status: sent, contentType, body } })
  return { contentType, body, kept }
}

/** What stops a call nobody is left to read. */
export function clientLeftError(): Error {
  return new Error('The client left.')
}

/** The error a call stopped through the cancel endpoint ends with (its client, if any, is gone). */
export function cancelledError(): GatewayError {
  return new GatewayError('call_cancelled', 'The call was cancelled through the Recoveries API.')
}
