import { discard, exchange, type Failure, isEventStream, rebuilt } from './attempt.js'
import type { CallRun } from './call-run.js'
import { sendCancel } from './recoveries.js'
import { splicedResponse } from './spliced-stream.js'
import { verdictOf } from './wait.js'

/** How long a request the app aborted before its headers is left running to learn which call to cancel (or less: `attemptTimeoutMs`). */
const LATE_HEAD_MS = 30_000

/**
 * Sends a model call until an attempt gives an answer for the app, failing over from base to base with the same
 * `Idempotency-Key`. Throws the app's abort reason, or the call's final error when every attempt failed.
 */
export async function sendModelCall(run: CallRun): Promise<Response> {
  let base = run.health.firstChoice(run.call.base)
  for (;;) {
    const outcome = await attempt(run, base)
    if (outcome instanceof Response) return outcome
    const next = run.next(base)
    await run.failed(base, next, outcome)
    base = next
  }
}

/** One attempt at `base`: the response for the app, or why the call must go on elsewhere. */
async function attempt(run: CallRun, base: number): Promise<Response | Failure> {
  const { call, cfg } = run
  const url = run.urlAt(base)
  run.sent++
  run.emit({ type: 'attempt', attempt: run.sent, url })
  const got = await exchange(cfg, call.signal, url, call.init, (pending, controller) =>
    cancelWhenHeadArrives(run, base, pending, controller),
  )
  if ('failure' in got) return got.failure
  const { response, controller } = got
  const requestId = run.saw(response)
  if (response.headers.get('idempotent-replayed') === 'true') run.emit({ type: 'replay', requestId, url })

  const verdict = verdictOf(response.status, response.headers)
  if (verdict.retry) {
    discard(response)
    const status = response.status
    return { reason: `status ${status}`, status, waitMs: verdict.waitMs, unhealthy: status >= 500 }
  }
  run.health.ok(base)
  if (!response.body) return response
  if (response.ok && isEventStream(response)) return splicedResponse(run, base, response, controller, url)

  // An answer is read whole here, so a body cut half-way is one more failed attempt (the retry is replayed), and the
  // app's abort is watched only while it is read.
  const app = call.signal
  const onAbort = () => controller.abort(app?.reason)
  app?.addEventListener('abort', onAbort, { once: true })
  try {
    return rebuilt(response, await response.arrayBuffer(), url)
  } catch (error) {
    if (app?.aborted) throw app.reason
    // An error answer is not kept by the gateway: sending the call again could run it twice.
    if (!response.ok) throw run.giveUp(`The body of a ${response.status} answer broke off.`, error)
    return { reason: 'body cut', error, unhealthy: true }
  } finally {
    app?.removeEventListener('abort', onAbort)
  }
}

/**
 * The app aborted before the answer's headers: the request goes on (for at most `LATE_HEAD_MS`) only to learn the
 * call's request id from them, so a stream the gateway would otherwise generate to the end for nobody is cancelled.
 */
function cancelWhenHeadArrives(run: CallRun, base: number, pending: Promise<Response>, controller: AbortController): void {
  const timer = setTimeout(() => controller.abort(), Math.min(LATE_HEAD_MS, run.cfg.attemptTimeoutMs ?? LATE_HEAD_MS))
  pending.then(
    (response) => {
      clearTimeout(timer)
      const requestId = response.headers.get('x-request-id')
      if (response.ok && requestId && isEventStream(response)) sendCancel(run, base, requestId)
      controller.abort()
      discard(response)
    },
    () => clearTimeout(timer),
  )
}
