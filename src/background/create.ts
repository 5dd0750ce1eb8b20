// `POST` of a call its client asked to run in the background: the gateway keeps the call, answers at once with
// its object (or, for a stream, its events as they come), and runs it to its end whatever the client does.
import { buildCallSpec } from '../call/build-call-spec.js'
import type { CallSpec } from '../call/call-spec.js'
import { admitUpstream, settleUpstream } from '../call/metering.js'
import type { BackgroundFormat } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import type { CallRoute, Exchange } from '../http/dispatch.js'
import type { RequestBody } from '../http/read-body.js'
import { withRequestId } from '../http/request-id.js'
import { ClientSink, type ResponseHead } from '../http/sink.js'
import { parseJsonBytesInSlices } from '../json/parse-in-slices.js'
import { jsonBytesInSlices } from '../json/text-in-slices.js'
import { editMembers, editTopLevelMembers, topLevelMembers } from '../json/top-members.js'
import type { LedgerEntry } from '../ledger/ledger.js'
import { streamHead } from '../recovery/stream/follow.js'
import type { Runtime } from '../runtime.js'
import { claimCreateKey } from './create-key.js'
import { createdFromBytes } from './created-from-bytes.js'
import { followHere, followStored, shownObject, streamEvents } from './follow.js'
import { lapseClock } from './lapse.js'
import { runInBackground } from './run.js'
import { RunLog } from './run-log.js'
import { type BackgroundHead, readHead } from './state.js'

/** A background call is nobody's repeat: its id is what a client comes back with. */
export const NO_REPEAT = { key: undefined, sdkRetryCount: undefined }

/**
 * The request as a whole object: a large body (checked already, but never parsed whole on the request path) is
 * decoded and parsed here once, a slice at a time: at once, a 20 MB create stalled every other request.
 */
async function wholeRequest(body: RequestBody): Promise<Record<string, unknown>> {
  if (body.value) return body.value
  const value = await parseJsonBytesInSlices(body.bytes)
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new GatewayError('invalid_request', 'The body must be a JSON object.')
  return value as Record<string, unknown>
}

/** Room for what a run's body may have that its create's had not: `"stream":true` in place of `"background":true`. */
const RUN_BODY_SLACK = 64

/**
 * The body sent upstream, written from `sent`: a large one (`large`: the size of the body it came from) a slice at a
 * time, as it was parsed, into a buffer about that size (its `background` member out, `stream` in).
 */
export async function runBodyOf(sent: Record<string, unknown>, large?: number): Promise<RequestBody> {
  const bytes =
    large !== undefined
      ? ((await jsonBytesInSlices(sent, '', '', undefined, large + RUN_BODY_SLACK)) as Buffer)
      : Buffer.from(JSON.stringify(sent), 'utf8')
  return { bytes, fields: sent, value: sent, spans: undefined }
}

/** A call's first state: its object as created, and its created event's text where written from the request's bytes. */
export interface FirstState {
  pending: Record<string, unknown>
  text?: string
}

/** The first state of the call its parsed request asks for. */
export function firstOfRequest(format: BackgroundFormat, requestId: string, request: Record<string, unknown>): FirstState {
  return { pending: format.pending(format.idOf(requestId), request, Math.floor(Date.now() / 1000)) }
}

/** A create made ready to run: the body sent upstream, its first state, and whether its client reads a stream. */
interface Prepared {
  runBody: RequestBody
  first: FirstState
  stream: boolean
}

/**
 * A large body (never parsed whole on the request path) goes upstream as the client's bytes with the format's members
 * edited, in place when the gateway read them itself, else in a copy of the same length; its created event is
 * written from those bytes (`createdFromBytes`). Parsed and written again, a 10 MiB create held about six times its
 * size at its peak. Where either cannot be made so, and for any other body, the request is parsed whole.
 */
async function prepare(format: BackgroundFormat, requestId: string, body: RequestBody): Promise<Prepared> {
  if (body.value === undefined) {
    const found = await topLevelMembers(body.bytes)
    const at = Math.floor(Date.now() / 1000)
    const first = await createdFromBytes(format, format.idOf(requestId), at, body.bytes, body.fields, found)
    const bytes = first && (await editTopLevelMembers(body.bytes, format.run, body.owned === true, found))
    if (first && bytes) {
      const fields = editMembers(body.fields, format.run)
      return { runBody: { bytes, fields, value: undefined, spans: body.spans }, first, stream: body.fields.stream === true }
    }
  }
  const request = await wholeRequest(body)
  const runBody = await runBodyOf(editMembers(request, format.run), body.value === undefined ? body.bytes.length : undefined)
  return { runBody, first: firstOfRequest(format, requestId, request), stream: request.stream === true }
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
  key: string | undefined,
): Promise<void> {
  const { runBody, first, stream } = await prepare(format, ex.requestId, body)
  const spec = buildCallSpec(rt, ex, call, runBody, NO_REPEAT)
  // A create sent again with its Idempotency-Key (a client's failover) gets the call the first one started.
  if (key !== undefined) {
    const claim = await claimCreateKey(rt, spec, key)
    if (claim.earlier !== undefined && (await answerEarlier(rt, ex, format, claim.earlier, stream))) return
    if (claim.earlier !== undefined) await claim.take()
  }
  const run = await startBackgroundRun(rt, ex, spec, format, first)
  if (stream) {
    return streamEvents(rt, ex.res, eventsHead(ex, ex.requestId, {}), (sink) => followHere(run, -1, sink))
  }
  sendObject(rt, ex, ex.requestId, run.objectText ?? run.object, {})
}

/**
 * Keeps a checked call's first state and runs it: bounded (`background.maxRunning…`) and metered before anything is
 * kept, so a refused call is a 429 in the client's dialect, never a response that later ends `failed`. Resolves once
 * its first state is stored (a retrieve anywhere then finds it); the call runs on to its end whatever its caller does.
 */
export async function startBackgroundRun(
  rt: Runtime,
  ex: Pick<Exchange, 'owner' | 'requestId'>,
  spec: CallSpec,
  format: BackgroundFormat,
  first: FirstState,
): Promise<RunLog> {
  const { owner, requestId } = ex
  const id = format.idOf(requestId)
  const { ttlMs } = rt.options.recovery
  const release = rt.background.claim(ex.owner, rt.options.background)
  let entry: LedgerEntry | undefined
  let run: RunLog
  try {
    entry = rt.ledger ? await admitUpstream(rt, spec) : undefined
    run = new RunLog(
      {
        owner,
        requestId,
        id,
        format,
        store: rt.store,
        // Names the request by its id alone: the run outlives its exchange, whose request holds the body it came with.
        onError: (error) =>
          rt.options.logger.warn('model-gateway: the state of a background response could not be written', {
            requestId,
            error: String(error),
          }),
      },
      { ttlMs, ...rt.options.background },
      first.pending,
      first.text,
    )
    try {
      await run.stored()
    } catch (error) {
      run.discard()
      throw error
    }
  } catch (error) {
    release()
    // Nothing went upstream: the reservation is given back.
    if (entry) settleUpstream(rt, spec, { status: 500, delivered: false, recovered: false, usage: undefined }, entry)
    throw error
  }
  rt.background.add(run)
  rt.console?.noteBackground(ex.owner, ex.requestId, id, spec.model.id)
  void run.ended.then(release)
  void runInBackground(rt, spec, run, entry)
  return run
}

const REPLAYED = { 'idempotent-replayed': 'true' }

/** The head of a background call's events, with the request id of the create that started it. */
function eventsHead(ex: Exchange, requestId: string, extra: Record<string, string>): ResponseHead {
  return streamHead(withRequestId({ ...extra }, ex.match.dialect, requestId))
}

/**
 * Answers with a call's object, or with its JSON text when that is at hand (the created event's slice): written a
 * slice at a time, each as the client takes it, so a create echoing megabytes copies none of them whole.
 */
function sendObject(rt: Runtime, ex: Exchange, requestId: string, object: unknown, extra: Record<string, string>): void {
  const headers = withRequestId({ 'content-type': 'application/json', ...extra }, ex.match.dialect, requestId)
  const sink = new ClientSink(ex.res, rt.clientDeadlines.write)
  if (typeof object === 'string') sink.completeText({ status: 200, headers }, object)
  else sink.complete({ status: 200, headers }, Buffer.from(JSON.stringify(object)))
}

/**
 * Answers a repeated create with the call its key started: its object, or its events from the start. False when that
 * call is gone (its first create failed before its state was stored): the key is then this create's.
 */
async function answerEarlier(rt: Runtime, ex: Exchange, format: BackgroundFormat, requestId: string, stream: boolean): Promise<boolean> {
  const here = rt.background.get(ex.owner, requestId)
  const head = here ? undefined : await readHead(rt.store, ex.owner, requestId)
  if (!here && !head) return false
  if (!stream) {
    const object = here
      ? (here.objectText ?? here.object)
      : await shownObject(rt.store, format, ex.owner, requestId, head as BackgroundHead, lapseClock(rt.options))
    if (!object) return false
    sendObject(rt, ex, requestId, object, REPLAYED)
    return true
  }
  await streamEvents(rt, ex.res, eventsHead(ex, requestId, REPLAYED), (sink) =>
    here
      ? followHere(here, -1, sink)
      : followStored({ store: rt.store, format, owner: ex.owner, requestId, clock: lapseClock(rt.options) }, -1, sink),
  )
  return true
}
