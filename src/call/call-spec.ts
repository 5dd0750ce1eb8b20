import type { ResolvedModel } from '../config/resolve.js'
import type { Dialect, OperationFormat } from '../dialects/index.js'
import type { RequestBody } from '../http/read-body.js'
import type { ResponseSink } from '../http/sink.js'
import type { TraceHeaders } from '../observe/channels.js'
import type { RequestHash } from '../recovery/body-hash.js'
import type { CallPlan, Translator } from '../translate/index.js'
import type { Operation } from '../types.js'
import type { BodyRefusal, ServedBy } from '../upstream/send.js'

/**
 * One model call, fully populated before anything goes upstream: the second of a call's three shapes, between the
 * inbound `Exchange` it is built from and the `UpstreamRequest` each attempt sends.
 */
export interface CallSpec {
  requestId: string
  /** The owner id (a digest, never the key). */
  owner: string
  operation: Operation
  /** The operation as the client's format asks for it (`operation` is its name). */
  format: OperationFormat
  /** The format the client speaks; `model.upstream.dialect` is the one the upstream speaks. */
  inbound: Dialect
  model: ResolvedModel
  stream: boolean
  /** The gateway path the request came to, for its record. */
  path: string
  /** The request body as received. */
  body: RequestBody
  /**
   * The bytes sent to `model`: the body, with `model` replaced where the upstream knows it by another name, or the
   * body translated into the upstream's format (`bodies.for(model)`, at hand).
   */
  upstreamBody: Buffer
  /**
   * The request as each upstream format gets it, and how each one's answers come back: answers are translated by
   * the model that answered (`response.served.model`), which a fallback may have made another than `model`.
   */
  bodies: CallBodies
  /** `performance.now()` when the call was accepted. */
  startedAt: number
  /**
   * What says this call may be a repeat: its `Idempotency-Key`, the SDK's retry count, and the id an AWS SDK gives
   * every attempt of one call (`amz-sdk-invocation-id`), which narrows what a retry joins to its own call's attempts.
   */
  repeat: { key: string | undefined; sdkRetryCount: number | undefined; invocationId?: string }
  /** The client's trace context, for diagnostics subscribers. */
  trace: TraceHeaders | undefined
  /** The client's session (`X-Claude-Code-Session-Id`), for usage events and spans; undefined when it sent none. */
  sessionId?: string
  /** The body's `request_body_hash`, computed once for the call on first ask (a large body's off the event loop). */
  requestHash: RequestHash
  /**
   * The owner's rate-limit headers as the ledger's check saw them, in the names the client's dialect reads; set by
   * that check, undefined for an owner without limits. They stand in for the upstream's own on every answer.
   */
  limitHeaders: Readonly<Record<string, string>> | undefined
  /** Shown the upstream's answer as it came, before translation, when the response cache may keep it. @default undefined */
  capture?: AnswerCapture
  /** What the response cache did with the call, for its `call:end`; undefined with the cache off. */
  cache?: 'hit' | 'miss' | 'bypass'
}

/** What sees a call's upstream answer as the upstream gave it (its keys taken out): the response cache's hook. */
export interface AnswerCapture {
  /** A whole answer, read. */
  whole(status: number, contentType: string | undefined, body: Buffer, served: ServedBy): void
  /** A 2xx stream about to be relayed: the sink that takes its bytes beside the client's, and learns how it ended. */
  stream(contentType: string | undefined, served: ServedBy): ResponseSink
}

/** A call between two formats: the translator and the plan its answer is translated with. */
export interface Translation {
  translator: Translator
  plan: CallPlan
}

/** The refusal of a field the target format cannot express, with the message the client would get. */
export interface Refused extends BodyRefusal {
  message: string
}

/** The request bodies of one call, one per upstream format, made when a model of that format is asked for. */
export interface CallBodies {
  /** The bytes for `model`, or the refusal of a field its format cannot express. */
  for(model: ResolvedModel): Buffer | Refused
  /** Whether the stream `model` answers has usage in it its client did not ask for (taken out before it is relayed). */
  usageAskedFor(model: ResolvedModel): boolean
  /** How an answer of `model` comes back into the client's format; undefined when it speaks the client's format. */
  translationFor(model: ResolvedModel): Translation | undefined
  /** The operation `model`'s upstream is asked: the client's own, or the one a translated call becomes. */
  operationFor(model: ResolvedModel): Operation
  /**
   * The headers of its dialect `model`'s upstream is sent (a flat `[name, value, …]` list): the client's own where
   * both speak one dialect (Anthropic's version and betas), else the upstream's configured ones.
   */
  headersFor(model: ResolvedModel): readonly string[]
}
