import type { ResolvedModel } from '../config/resolve.js'
import { GatewayError, invalidField, shown } from '../errors.js'
import type { CallRoute, Exchange } from '../http/dispatch.js'
import type { RequestBody } from '../http/read-body.js'
import { traceHeadersOf } from '../observe/channels.js'
import { sessionIdOf } from '../observe/session-id.js'
import { hashOnce } from '../recovery/body-hash.js'
import type { Runtime } from '../runtime.js'
import type { CallSpec } from './call-spec.js'
import { UpstreamBodies } from './upstream-bodies.js'

function findModel(rt: Runtime, id: string): ResolvedModel {
  const model = rt.options.models.get(id) ?? rt.options.aliases.get(id)
  if (!model) throw new GatewayError('model_not_found', `The model '${shown(id)}' does not exist.`, { param: 'model' })
  return model
}

/**
 * The call an exchange asks for once its body is read: validates the body, resolves the model and prepares the
 * upstream bytes; throws the client's 400/404.
 */
export function buildCallSpec(
  rt: Runtime,
  // Not the response: a call over a WebSocket has none.
  ex: Pick<Exchange, 'req' | 'requestId' | 'match' | 'owner' | 'path' | 'startedAt'>,
  call: CallRoute,
  body: RequestBody,
  repeat: CallSpec['repeat'],
): CallSpec {
  const { format } = call.route
  const { requestId } = ex
  const inbound = ex.match.dialect
  const target = format.read(body.fields, call.target)
  const model = findModel(rt, target.model)
  // A route whose body is another dialect's with its own transport's members: every upstream gets that dialect's body,
  // naming the configured model (an alias in the path is renamed like an id from there on).
  const spoken = format.spokenBody?.(body, { ...target, model: model.id }, ex.req.headers)
  const bodies = new UpstreamBodies({
    requestId,
    format,
    inbound,
    body: spoken?.body ?? body,
    model,
    stream: target.stream,
    // Not merged into a copy of the client's headers: only the few a dialect forwards are ever read.
    clientHeaders: ex.req.headers,
    spokenHeaders: spoken?.headers,
    strict: rt.options.translation.strict,
  })
  const upstreamBody = bodies.for(model)
  // The model asked for cannot take a field: that is the client's 400, by name, before anything goes upstream.
  if (!Buffer.isBuffer(upstreamBody)) invalidField(upstreamBody.refusedField, upstreamBody.message)
  const spec: CallSpec = {
    requestId,
    owner: ex.owner,
    operation: format.operation,
    format,
    inbound,
    model,
    stream: target.stream,
    path: ex.path,
    body,
    upstreamBody,
    bodies,
    startedAt: ex.startedAt,
    repeat,
    trace: traceHeadersOf(ex.req.headers),
    requestHash: hashOnce(body, ex.owner),
    limitHeaders: undefined,
  }
  const sessionId = sessionIdOf(ex.req.headers)
  if (sessionId !== undefined) spec.sessionId = sessionId
  return spec
}
