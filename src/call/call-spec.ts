import type { ResolvedModel } from '../config/resolve.js'
import type { CallTarget, Dialect, OperationFormat } from '../dialects/index.js'
import { GatewayError, invalidField, shown } from '../errors.js'
import type { RequestBody } from '../http/read-body.js'
import { replaceTopLevelString } from '../json/rewrite.js'
import type { TraceHeaders } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { type CallPlan, type Translator, translatorFor } from '../translate/index.js'
import type { Operation } from '../types.js'

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
   * The bytes sent upstream: the body, with `model` replaced where the upstream knows it by another name, or the
   * body translated into the upstream's format.
   */
  upstreamBody: Buffer
  /** How answers come back into the client's format, when the upstream speaks another; undefined for passthrough. */
  translation: Translation | undefined
  /** Whether `upstreamBody` names the model (a fallback then renames it), rather than the upstream path. */
  modelInUpstreamBody: boolean
  /** `performance.now()` when the call was accepted. */
  startedAt: number
  /** What says this call may be a repeat: its `Idempotency-Key`, and the SDK's retry count. */
  repeat: RepeatHeaders
  /** The client's trace context, for diagnostics subscribers. */
  trace: TraceHeaders | undefined
}

/** A call between two formats: the translator and the plan its answer is translated with. */
export interface Translation {
  translator: Translator
  plan: CallPlan
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

function findModel(rt: Runtime, id: string): ResolvedModel {
  const model = rt.options.models.get(id)
  if (!model) throw new GatewayError('model_not_found', `The model '${shown(id)}' does not exist.`, { param: 'model' })
  return model
}

/** The body in the upstream's format; a field the upstream's format cannot express is the client's 400, by name. */
function translated(
  translator: Translator,
  body: RequestBody,
  call: Parameters<Translator['request']>[1],
): { bytes: Buffer; translation: Translation; modelInBody: boolean } {
  // A large body is only scanned on the way in; translating it needs it whole.
  const fields = body.value ?? (JSON.parse(body.bytes.toString('utf8')) as Record<string, unknown>)
  const result = translator.request(fields, call)
  if (!result.ok) invalidField(result.field, result.message)
  const { body: upstream, plan } = result.value
  const modelInBody = typeof (upstream as { model?: unknown }).model === 'string'
  return { bytes: Buffer.from(JSON.stringify(upstream)), translation: { translator, plan }, modelInBody }
}

/** The body as sent, naming the model as the upstream knows it wherever the format names it in the body. */
function renamed(format: OperationFormat, body: RequestBody, id: string, upstreamModel: string): Buffer {
  if (format.modelInBody) return withModel(body, upstreamModel)
  if (!format.renameInBody) return body.bytes
  const text = body.bytes.toString('utf8')
  const out = format.renameInBody(text, id, upstreamModel)
  return out === text ? body.bytes : Buffer.from(out, 'utf8')
}

/** The bytes for a fallback model of the same format: the same request, naming the model as its upstream knows it. */
export function upstreamBodyFor(spec: CallSpec, model: ResolvedModel): Buffer {
  if (model === spec.model) return spec.upstreamBody
  // Formats that carry the model in the path only (generate-content) send the same bytes to every model.
  if (!spec.modelInUpstreamBody) return spec.upstreamBody
  if (spec.translation) return Buffer.from(replaceTopLevelString(spec.upstreamBody.toString('utf8'), 'model', model.upstreamModel))
  return renamed(spec.format, spec.body, spec.model.id, model.upstreamModel)
}

/** A passthrough-only operation (embeddings, token counts) refuses a model of another format: the client's 400. */
function refuseOtherFormat(format: OperationFormat, model: ResolvedModel): void {
  const refusal = format.refuseOtherFormat?.(model.id)
  if (refusal !== undefined) invalidField('model', refusal)
}

/** Validates the body, resolves the model and prepares the upstream bytes; throws the client's 400/404. */
export function buildCallSpec(rt: Runtime, request: CallRequest): CallSpec {
  const { format, body } = request
  const target = format.read(body.fields, request.fromPath)
  const model = findModel(rt, target.model)
  let upstreamBody = body.bytes
  let translation: Translation | undefined
  let modelInUpstreamBody = format.modelInBody || format.renameInBody !== undefined
  if (request.inbound !== model.upstream.dialect) refuseOtherFormat(format, model)
  const translator = translatorFor(request.inbound, model.upstream.dialect)
  if (translator) {
    const call = { model: model.id, upstreamModel: model.upstreamModel, stream: target.stream, requestId: request.requestId }
    ;({ bytes: upstreamBody, translation, modelInBody: modelInUpstreamBody } = translated(translator, body, call))
  } else if (model.upstreamModel !== model.id) upstreamBody = renamed(format, body, model.id, model.upstreamModel)
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
    translation,
    modelInUpstreamBody,
    startedAt: request.startedAt,
    repeat: request.repeat,
    trace: request.trace,
  }
}
