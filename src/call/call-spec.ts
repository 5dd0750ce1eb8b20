import type { ResolvedModel } from '../config/resolve.js'
import type { CallTarget, Dialect, OperationFormat } from '../dialects/index.js'
import { GatewayError, invalidField, shown } from '../errors.js'
import type { RequestBody } from '../http/read-body.js'
import type { TraceHeaders } from '../observe/channels.js'
import { hashOnce } from '../recovery/body-hash.js'
import type { Runtime } from '../runtime.js'
import type { Operation } from '../types.js'
import { UpstreamBodies } from './upstream-bodies.js'

/** One model call, fully populated before anything goes upstream. */
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
  bodies: UpstreamBodies
  /** `performance.now()` when the call was accepted. */
  startedAt: number
  /** What says this call may be a repeat: its `Idempotency-Key`, and the SDK's retry count. */
  repeat: RepeatHeaders
  /** The client's trace context, for diagnostics subscribers. */
  trace: TraceHeaders | undefined
  /** The body's `request_body_hash`, computed once for the call on first ask (a large body's off the event loop). */
  requestHash: () => Promise<string>
}

/** The headers by which a request says it repeats a call. */
export interface RepeatHeaders {
  key: string | undefined
  sdkRetryCount: number | undefined
}

/** What a handler knows about a model call once its body is read. */
export interface CallRequest {
  requestId: string
  owner: string
  format: OperationFormat
  inbound: Dialect
  path: string
  body: RequestBody
  /** What the route read from the URL (generate-content), if anything. */
  fromPath: CallTarget | undefined
  startedAt: number
  repeat: RepeatHeaders
  trace: TraceHeaders | undefined
}

function findModel(rt: Runtime, id: string): ResolvedModel {
  const model = rt.options.models.get(id)
  if (!model) throw new GatewayError('model_not_found', `The model '${shown(id)}' does not exist.`, { param: 'model' })
  return model
}

/** Validates the body, resolves the model and prepares the upstream bytes; throws the client's 400/404. */
export function buildCallSpec(rt: Runtime, request: CallRequest): CallSpec {
  const { format, body } = request
  const target = format.read(body.fields, request.fromPath)
  const model = findModel(rt, target.model)
  const { requestId, inbound } = request
  const bodies = new UpstreamBodies({ requestId, format, inbound, body, modelId: model.id, stream: target.stream })
  const upstreamBody = bodies.for(model)
  // The model asked for cannot take a field: that is the client's 400, by name, before anything goes upstream.
  if (!Buffer.isBuffer(upstreamBody)) invalidField(upstreamBody.refusedField, upstreamBody.message)
  return {
    requestId: request.requestId,
    owner: request.owner,
    operation: format.operation,
    format,
    inbound: request.inbound,
    model,
    stream: target.stream,
    path: request.path,
    body,
    upstreamBody,
    bodies,
    startedAt: request.startedAt,
    repeat: request.repeat,
    trace: request.trace,
    requestHash: hashOnce(body),
  }
}
