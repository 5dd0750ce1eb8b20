import { createInBackground } from '../background/create.js'
import { buildCallSpec } from '../call/build-call-spec.js'
import type { CallSpec } from '../call/call-spec.js'
import { runCall } from '../call/run-call.js'
import { clientFraming } from '../dialects/framing/index.js'
import type { CallRoute, Exchange } from '../http/dispatch.js'
import { ClientSink } from '../http/sink.js'
import { idempotencyKeyOf, sdkInvocationIdOf, sdkRetryCountOf } from '../idempotency/headers.js'
import type { Runtime } from '../runtime.js'
import { withBody } from './body.js'

/** How a model call runs once its spec is built: `runCall`, or a wrapper around it (the response cache). */
export type ServeCall = (rt: Runtime, ex: Exchange, spec: CallSpec, client: ClientSink) => Promise<void>

const direct: ServeCall = (rt, _ex, spec, client) => runCall(rt, spec, client)

/**
 * Every model call of every dialect: reads, validates and runs the call of the route's operation. Embeddings and
 * token counts are passthrough to a model of the client's format (the format refuses a model of another one).
 */
export function serveModelCall(rt: Runtime, ex: Exchange, call: CallRoute, serve: ServeCall = direct): Promise<void> {
  const { format } = call.route
  // A query the format cannot honour is refused before anything is read.
  if (format.checkQuery && call.target) format.checkQuery(ex.match.query, call.target.stream)
  // The sink's delivery watch starts now: a client that leaves while the body is read or the upstream works is seen.
  const client = new ClientSink(ex.res, rt.clientDeadlines.write, clientFraming(format))
  // Read before the body, so a malformed key costs no upload.
  const { headers } = ex.req
  const repeat: CallSpec['repeat'] = { key: idempotencyKeyOf(headers), sdkRetryCount: sdkRetryCountOf(headers) }
  const invocationId = repeat.sdkRetryCount === undefined ? undefined : sdkInvocationIdOf(headers)
  if (invocationId !== undefined) repeat.invocationId = invocationId
  return withBody(rt, ex, { readFields: format.readFields, elementFields: format.elementFields }, (body) => {
    // A call its client asked to run in the background is the gateway's to run and keep, not the upstream's.
    const background = call.route.background
    if (background?.asks(body.fields)) return createInBackground(rt, ex, call, background, body, repeat.key)
    const spec = buildCallSpec(rt, ex, call, body, repeat)
    return serve(rt, ex, spec, client)
  })
}
