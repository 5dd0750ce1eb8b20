import { buildCallSpec } from '../call/call-spec.js'
import { runCall } from '../call/run-call.js'
import type { CallTarget, OperationFormat } from '../dialects/index.js'
import type { Exchange } from '../http/dispatch.js'
import { ClientSink } from '../http/sink.js'
import { idempotencyKeyOf, sdkRetryCountOf } from '../idempotency/headers.js'
import { traceHeadersOf } from '../observe/channels.js'
import type { Runtime } from '../runtime.js'
import { withBody } from './body.js'

/** Reads, validates and runs one model call of `format`; the shared body of the model-call endpoints. */
export function serveModelCall(rt: Runtime, ex: Exchange, format: OperationFormat, fromPath: CallTarget | undefined): Promise<void> {
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
