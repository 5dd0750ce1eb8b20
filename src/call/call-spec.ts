import type { ResolvedModel } from '../config/resolve.js'
import type { CallTarget, Dialect, OperationFormat } from '../dialects/index.js'
import { GatewayError, shown } from '../errors.js'
import type { RequestBody } from '../http/read-body.js'
import { replaceTopLevelString } from '../json/rewrite.js'
import type { TraceHeaders } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import type { Operation } from '../types.js'

/** One model call, fully populated before anything goes upstream. */
export interface CallSpec {
  requestId: string
  /** The owner id (a digest, never the key). */
  owner: string
  operation: Operation
  /** The format the client speaks; `model.upstream.dialect` is the one the upstream speaks. */
  inbound: Dialect
  model: ResolvedModel
  stream: boolean
  /** The gateway path the request came to, for its record. */
  path: string
  /** The request body as received. */
  body: RequestBody
  /** The bytes sent upstream: the body, with `model` replaced where the upstream knows it by another name. */
  upstreamBody: Buffer
  /** `performance.now()` when the call was accepted. */
  startedAt: number
  /** What says this call may be a repeat: its `Idempotency-Key`, and the SDK's retry count. */
  repeat: RepeatHeaders
  /** The client's trace context, for diagnostics subscribers. */
  trace: TraceHeaders | undefined
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

/** The body with its top-level `model` replaced: spliced at the scanner's span for a large body, never decoded whole. */
function withModel(body: RequestBody, name: string): Buffer {
  const span = body.spans?.get('model')
  if (span) return Buffer.concat([body.bytes.subarray(0, span[0]), Buffer.from(JSON.stringify(name)), body.bytes.subarray(span[1])])
  return Buffer.from(replaceTopLevelString(body.bytes.toString('utf8'), 'model', name), 'utf8')
}

function findModel(rt: Runtime, id: string, inbound: Dialect): ResolvedModel {
  const model = rt.options.models.get(id)
  if (!model || model.upstream.dialect !== inbound) {
    // Same answer for "absent" and "other format": the list of what is configured is public anyway.
    throw new GatewayError('model_not_found', `The model '${shown(id)}' does not exist or is not served in this format.`, {
      param: 'model',
    })
  }
  return model
}

/** Validates the body, resolves the model and prepares the upstream bytes; throws the client's 400/404. */
export function buildCallSpec(rt: Runtime, request: CallRequest): CallSpec {
  const { format, body } = request
  const target = format.read(body.fields, request.fromPath)
  const model = findModel(rt, target.model, request.inbound)
  let upstreamBody = body.bytes
  if (format.modelInBody && model.upstreamModel !== model.id) upstreamBody = withModel(body, model.upstreamModel)
  return {
    requestId: request.requestId,
    owner: request.owner,
    operation: format.operation,
    inbound: request.inbound,
    model,
    stream: target.stream,
    path: request.path,
    body,
    upstreamBody,
    startedAt: request.startedAt,
    repeat: request.repeat,
    trace: request.trace,
  }
}
