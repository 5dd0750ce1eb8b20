// `POST` of a call its client asked to run in the background: the gateway keeps the call, answers at once with
// its object (or, for a stream, its events as they come), and runs it to its end whatever the client does.
import { buildCallSpec } from '../call/build-call-spec.js'
import type { BackgroundFormat } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import type { CallRoute, Exchange } from '../http/dispatch.js'
import type { RequestBody } from '../http/read-body.js'
import { withRequestId } from '../http/request-id.js'
import type { Runtime } from '../runtime.js'
import { followHere } from './follow.js'
import { runInBackground } from './run.js'
import { RunLog } from './run-log.js'

/** A background call is nobody's repeat: its id is what a client comes back with. */
const NO_REPEAT = { key: undefined, sdkRetryCount: undefined }

/** The request as a whole object: a large body is parsed here once (background calls are rare and long). */
function wholeRequest(body: RequestBody): Record<string, unknown> {
  if (body.value) return body.value
  const value = JSON.parse(body.bytes.toString('utf8')) as unknown
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new GatewayError('invalid_request', 'The body must be a JSON object.')
  return value as Record<string, unknown>
}

/**
 * Starts a background call: checks it as any call (a 400 or 404 before anything is kept), keeps its first state,
 * and only then answers, so a retrieve on any process sharing the store finds it. The upstream is asked for a plain
 * stream whose events are kept under the call's id.
 */
export async function createInBackground(
  rt: Runtime,
  ex: Exchange,
  call: CallRoute,
  format: BackgroundFormat,
  body: RequestBody,
): Promise<void> {
  const request = wholeRequest(body)
  const sent = format.runRequest(request)
  const runBody: RequestBody = { bytes: Buffer.from(JSON.stringify(sent), 'utf8'), fields: sent, value: sent, spans: undefined }
  const spec = buildCallSpec(rt, ex, call, runBody, NO_REPEAT)
  const id = format.idOf(ex.requestId)
  const { ttlMs } = rt.options.recovery
  const run = new RunLog(
    {
      owner: ex.owner,
      requestId: ex.requestId,
      id,
      format,
      store: rt.store,
      onError: (error) =>
        rt.options.logger.warn('model-gateway: the state of a background response could not be written', {
          requestId: ex.requestId,
          error: String(error),
        }),
    },
    { ttlMs, ...rt.options.background },
    format.pending(id, request, Math.floor(Date.now() / 1000)),
  )
  try {
    await run.stored()
  } catch (error) {
    run.discard()
    throw error
  }
  rt.background.add(run)
  void runInBackground(rt, spec, run)
  const { res } = ex
  if (request.stream === true) {
    res.writeHead(
      200,
      withRequestId(
        { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
        ex.match.dialect,
        ex.requestId,
      ),
    )
    return followHere(run, -1, res)
  }
  const bytes = Buffer.from(JSON.stringify(run.object))
  res.writeHead(200, withRequestId({ 'content-type': 'application/json', 'content-length': bytes.length }, ex.match.dialect, ex.requestId))
  res.end(bytes)
}
