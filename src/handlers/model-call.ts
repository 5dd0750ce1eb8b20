import { buildCallSpec } from '../call/call-spec.js'
import { runCall } from '../call/run-call.js'
import type { CallRoute, Exchange } from '../http/dispatch.js'
import { ClientSink } from '../http/sink.js'
import { idempotencyKeyOf, sdkRetryCountOf } from '../idempotency/headers.js'
import { traceHeadersOf } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { withBody } from './body.js'

/**
 * Every model call of every dialect: reads, validates and runs the call of the route's operation. Embeddings and
 * token counts are passthrough to a model of the client's format (the format refuses a model of another one).
 */
export function serveModelCall(rt: Runtime, ex: Exchange, { route: { format }, target: fromPath }: CallRoute): Promise<void> {
  // A query the format cannot honour is refused before anything is read.
  if (format.checkQuery && fromPath) format.checkQuery(ex.match.query, fromPath.stream)
  // The sink's delivery watch starts now: a client that leaves while the body is read or the upstream works is seen.
  const client = new ClientSink(ex.res)
  // Read before the body, so a malformed key costs no upload.
  const repeat = { key: idempotencyKeyOf(ex.req.headers), sdkRetryCount: sdkRetryCountOf(ex.req.headers) }
  return withBody(rt, ex, { readFields: format.readFields, elementFields: format.elementFields }, (body) => {
    const spec = buildCallSpec(rt, {
      requestId: ex.requestId,
      owner: ex.owner,
      format,
      inbound: ex.match.dialect,
      path: ex.path,
      body,
      fromPath,
      startedAt: ex.startedAt,
      repeat,
      trace: traceHeadersOf(ex.req.headers),
    })
    return runCall(rt, spec, client)
  })
}
