import type { CallSpec } from '../call/call-spec.js'
import { endCommitted, errorAsEvent } from '../call/committed-stream.js'
import { clientFraming } from '../dialects/framing/index.js'
import { GatewayError } from '../errors.js'
import { withRequestId } from '../http/request-id.js'
import type { ClientSink, ResponseHead } from '../http/sink.js'
import { callStartMessage } from '../observe/call-message.js'
import { type CallServedMessage, channels } from '../observe/channels.js'
import { followJournal, runningJournal, streamHead } from '../recovery/stream/follow.js'
import type { Runtime } from '../runtime.js'
import { type Fingerprint, fingerprintOf, keyDigest } from './fingerprint.js'
import type { JoinableCall } from './joinable-calls.js'
import { decodeKeyState, encodeKeyState } from './key-state.js'
import { CallLease, CLAIM_MARGIN_MS, keyName, runName } from './lease.js'
import type { KeptAnswer } from './recent-answers.js'
import { findRecordedAnswer } from './recorded-answer.js'
import { noteServedAgain } from './served-again.js'
import { replayedHead } from './shared-response.js'

/** What admission decided: the request was answered already, or it runs (with a lease when it may be repeated). */
export type Admission = { served: true } | { served: false; lease: CallLease | undefined }

const RUN: Admission = { served: false, lease: undefined }
const SERVED: Admission = { served: true }
const CLAIMED = Symbol('claimed')
const UNCLAIMED = Symbol('unclaimed')
/** The call of a key runs in another process as a stream whose journal can be followed from its start. */
interface Followable {
  follow: string
}
/** How often a request waiting on another process's call looks at the store again. */
const POLL_MS = 200
/** How often a keyed call asks a store that failed again, within `idempotency.storeWaitMs`. */
const STORE_POLL_MS = 100

/** Whether a call carries what a repeat of it would: an `Idempotency-Key`, or an SDK's retry count (when those count). */
export function mayBeRepeated(rt: Runtime, spec: CallSpec): boolean {
  const { key, sdkRetryCount } = spec.repeat
  return key !== undefined || (sdkRetryCount !== undefined && rt.options.idempotency.sdkRetries)
}

/**
 * Decides whether a model call goes upstream. A retry of an SDK call joins the same call still running here, or
 * gets its answer from memory or from a recovery record; a repeated `Idempotency-Key` joins, replays, waits for
 * another process, or is refused for another body. Requests with neither header cost nothing here.
 */
export async function admitCall(rt: Runtime, spec: CallSpec, client: ClientSink): Promise<Admission> {
  const { key, sdkRetryCount } = spec.repeat
  if (!mayBeRepeated(rt, spec)) return RUN
  let fingerprint: Fingerprint
  try {
    fingerprint = await fingerprintOf(spec)
  } catch (error) {
    // Without a fingerprint nothing can be joined or kept: the call runs as if it had neither header.
    rt.options.logger.warn('model-gateway: could not fingerprint a call; it runs without repeat protection', {
      requestId: spec.requestId,
      error: String(error),
    })
    return RUN
  }
  if (key !== undefined) return admitKeyed(rt, spec, client, fingerprint, keyDigest(key))
  if (sdkRetryCount !== undefined && sdkRetryCount > 0 && (await serveRetry(rt, spec, client, fingerprint))) return SERVED
  return { served: false, lease: new CallLease(rt, spec, fingerprint, undefined) }
}

/** An SDK retry: the same call running here, its answer in memory, the call running elsewhere, or its recovery record. */
async function serveRetry(rt: Runtime, spec: CallSpec, client: ClientSink, fingerprint: Fingerprint): Promise<boolean> {
  const running = rt.repeats.joinable.withFingerprint(fingerprint.id)
  if (running?.shared.joinable) {
    await joinRunning(rt, spec, client, running)
    return true
  }
  const kept =
    rt.repeats.recent.get(fingerprint.id) ??
    (await awaitElsewhere(rt, spec, client, fingerprint)) ??
    (await findRecordedAnswer(rt, spec, fingerprint).catch((error: unknown) => {
      rt.options.logger.warn('model-gateway: could not look for the answer of a retried call; it goes upstream again', {
        requestId: spec.requestId,
        error: String(error),
      })
      return undefined
    }))
  if (!kept) return false
  replay(rt, spec, client, kept)
  return true
}

/**
 * The same call marked running by another process (its client left): waits for its answer up to
 * `idempotency.waitMs`, then 409. Undefined when no process said so, or the store cannot be asked.
 */
async function awaitElsewhere(rt: Runtime, spec: CallSpec, client: ClientSink, fingerprint: Fingerprint): Promise<KeptAnswer | undefined> {
  const waitUntil = Date.now() + rt.options.idempotency.waitMs
  for (;;) {
    const text = await rt.store.getValue(spec.owner, runName(fingerprint.id)).catch(() => undefined)
    const state = text === undefined ? undefined : decodeKeyState(text)
    if (state === undefined || state.fingerprint !== fingerprint.id) return undefined
    if (state.state === 'done') return state
    await pause(client, waitUntil)
  }
}

/** Waits one poll interval, or answers 409 when the wait bound is reached or the client left. */
async function pause(client: ClientSink, waitUntil: number): Promise<void> {
  if (Date.now() + POLL_MS > waitUntil || client.watch.clientGone) throw inFlight()
  await new Promise((resolve) => setTimeout(resolve, POLL_MS))
}

async function admitKeyed(rt: Runtime, spec: CallSpec, client: ClientSink, fingerprint: Fingerprint, digest: string): Promise<Admission> {
  const local = rt.repeats.joinable.withKey(spec.owner, digest)
  if (local) {
    if (local.fingerprint.id !== fingerprint.id) throw keyReused()
    // A stream too long to have been kept whole cannot be replayed from its start.
    if (!local.shared.joinable) throw inFlight()
    await joinRunning(rt, spec, client, local)
    return SERVED
  }
  // Registered before the store is asked, so a repeat in this process during the claim joins instead of claiming.
  const lease = new CallLease(rt, spec, fingerprint, digest)
  try {
    const done = await claimKey(rt, spec, client, fingerprint, digest)
    if (done === CLAIMED || done === UNCLAIMED) {
      lease.claimed = done === CLAIMED
      return { served: false, lease }
    }
    if ('follow' in done) {
      // Repeats that joined here during the wait come back for the answer; this one follows the stream.
      lease.shared.fail(inFlight())
      lease.withdraw()
      publishServed(rt, spec, done.follow, 'join')
      noteServedAgain(rt, spec.owner, done.follow, client)
      await followElsewhere(rt, spec, client, done.follow)
      return SERVED
    }
    replay(rt, spec, client, done)
    // Anyone who joined during the wait gets the same replay.
    lease.shared.complete(answerHead(spec, done), done.body)
    lease.withdraw()
    return SERVED
  } catch (error) {
    lease.shared.fail(error)
    lease.withdraw()
    throw error
  }
}

/**
 * Claims the key in the store (one `SET NX` on Redis): resolves CLAIMED when this request now holds it, UNCLAIMED
 * when the store could not be asked within `idempotency.storeWaitMs` and `idempotency.failOpen` runs it anyway
 * (without it: 503 `store_unavailable`), the kept answer of the same call, or the request id of its stream running in
 * another process whose client left (journalled, so it can be followed); otherwise waits while another process
 * runs it, up to `idempotency.waitMs`, then 409.
 */
async function claimKey(
  rt: Runtime,
  spec: CallSpec,
  client: ClientSink,
  fingerprint: Fingerprint,
  digest: string,
): Promise<KeptAnswer | Followable | typeof CLAIMED | typeof UNCLAIMED> {
  const claim = encodeKeyState({ state: 'running', fingerprint: fingerprint.id, requestId: spec.requestId })
  const claimTtl = rt.options.timeouts.upstreamMs + CLAIM_MARGIN_MS
  const waitUntil = Date.now() + rt.options.idempotency.waitMs
  let storeWait: number | undefined
  for (;;) {
    let existing: string | undefined
    try {
      existing = await rt.store.claimValue(spec.owner, keyName(digest), claim, claimTtl)
    } catch (error) {
      // The store is down: its answer may be kept there (or another process may run the call), so the key is not run
      // unguarded. Repeats in this process join meanwhile (the lease is registered).
      storeWait ??= Date.now() + rt.options.idempotency.storeWaitMs
      if (Date.now() + STORE_POLL_MS <= storeWait && !client.watch.clientGone) {
        await new Promise((resolve) => setTimeout(resolve, STORE_POLL_MS))
        continue
      }
      return storeDown(rt, spec, error)
    }
    if (existing === undefined) return CLAIMED
    const state = decodeKeyState(existing)
    if (state === undefined) {
      // Not a value this gateway wrote (or damaged): it cannot stand for a call, so it is replaced.
      await rt.store.deleteValue(spec.owner, keyName(digest))
      continue
    }
    if (state.fingerprint !== fingerprint.id) throw keyReused()
    if (state.state === 'done') return state
    // A stream whose client left in another process is journalled there: it can be followed instead of waited for.
    if (spec.stream && (await runningJournal(rt.store, spec.owner, state.requestId).catch(() => undefined)))
      return { follow: state.requestId }
    await pause(client, waitUntil)
  }
}

/**
 * The key could not be claimed within `idempotency.storeWaitMs`: 503 with `retry-after`, or, with
 * `idempotency.failOpen`, the call runs unguarded (this process still joins its own repeats).
 */
function storeDown(rt: Runtime, spec: CallSpec, error: unknown): typeof UNCLAIMED {
  const meta = { requestId: spec.requestId, error: String(error) }
  if (rt.options.idempotency.failOpen) {
    rt.options.logger.warn(
      'model-gateway: an idempotency key could not be claimed in the store; the call runs (idempotency.failOpen)',
      meta,
    )
    return UNCLAIMED
  }
  rt.options.logger.warn('model-gateway: an idempotency key could not be claimed in the store; the call is refused (503)', meta)
  throw new GatewayError('store_unavailable', 'The idempotency store cannot be reached; retry shortly with the same Idempotency-Key.', {
    retryAfterSeconds: 1,
    shouldRetry: true,
    cause: error,
  })
}

/** The same call is still being answered and cannot be joined here: the client comes back after `retry-after`. */
function inFlight(): GatewayError {
  return new GatewayError('idempotency_in_flight', 'The same request is still being answered; retry shortly.', {
    retryAfterSeconds: 1,
    shouldRetry: true,
  })
}

/** The refusal of an `Idempotency-Key` sent again with another request. */
export function keyReused(): GatewayError {
  return new GatewayError(
    'idempotency_key_reused',
    'This Idempotency-Key was used with another request; use a new key for a new request.',
    {
      param: 'Idempotency-Key',
    },
  )
}

/** The head of a kept answer, served again: the id is the call's that made it. */
function answerHead(spec: CallSpec, answer: KeptAnswer): ResponseHead {
  const headers = { 'content-type': answer.contentType, 'content-length': answer.body.length }
  return replayedHead({ status: answer.status, headers: withRequestId(headers, spec.inbound, answer.requestId) })
}

function replay(rt: Runtime, spec: CallSpec, client: ClientSink, answer: KeptAnswer): void {
  client.complete(answerHead(spec, answer), answer.body)
  publishServed(rt, spec, answer.requestId, 'replay')
  noteServedAgain(rt, spec.owner, answer.requestId, client)
}

/**
 * Serves a running call's response to a repeat of it. A streamed repeat that comes before the upstream answered waits
 * as long as the call's own client: it gets keep-alives too, behind the head that client got, marked replayed.
 */
async function joinRunning(rt: Runtime, spec: CallSpec, client: ClientSink, running: JoinableCall): Promise<void> {
  publishServed(rt, spec, running.requestId, 'join')
  noteServedAgain(rt, spec.owner, running.requestId, client)
  const ahead = spec.stream ? running.shared.joinerHeadAhead : undefined
  if (!rt.keepAlive || !ahead) return running.shared.join(client)
  // Its error event names the call it joined, as its head does.
  const source = { format: spec.format, inbound: spec.inbound, requestId: running.requestId }
  client.headAhead(ahead)
  const release = rt.keepAlive.hold(client)
  try {
    await running.shared.join(client, errorAsEvent(source, client))
  } catch (error) {
    throw endCommitted(source, client, error)
  } finally {
    release()
  }
}

/** Follows a stream journalled by another process; a quiet spell there gets keep-alives here. */
async function followElsewhere(rt: Runtime, spec: CallSpec, client: ClientSink, requestId: string): Promise<void> {
  // The repeat asks for the same operation as the call it follows: its client's framing is that call's.
  client.open(replayedHead(streamHead(withRequestId({}, spec.inbound, requestId), clientFraming(spec.format))))
  const release = rt.keepAlive?.hold(client)
  try {
    await followJournal(rt.store, spec.owner, requestId, 0, client)
  } finally {
    release?.()
  }
}

function publishServed(rt: Runtime, spec: CallSpec, originalRequestId: string, how: CallServedMessage['how']): void {
  if (!channels.callServed.hasSubscribers) return
  channels.callServed.publish({ ...callStartMessage(rt.id, spec), originalRequestId, how } satisfies CallServedMessage)
}
