import { discard, exchange, type Failure, isEventStream, rebuilt } from './attempt.js'
import type { CallRun } from './call-run.js'
import { EventSplicer } from './event-splicer.js'
import type { Base } from './options.js'
import { recoveriesHeaders, recoveriesUrl, sendCancel } from './recoveries.js'
import { verdictOf } from './wait.js'

/** Where the stream's bytes come from now: the call's own answer, then each resume. */
interface Source {
  reader: ReadableStreamDefaultReader<Uint8Array>
  controller: AbortController
  base: number
  /** Events counted when this source opened: a source cut before adding one is a failed request. */
  countAtOpen: number
}

/**
 * The app's response for a streamed answer: the events of `first` and, when its body breaks, those of a resume
 * (`GET /v1/recoveries/{id}/stream` with `Last-Event-ID`) on the next bases, spliced into one body so the SDK never
 * sees the cut. The app's abort ends the source and asks the gateway to stop the call.
 */
export function splicedResponse(run: CallRun, base: number, first: Response, controller: AbortController, url: string): Response {
  const requestId = first.headers.get('x-request-id') ?? undefined
  const splicer = new EventSplicer()
  const app = run.call.signal
  let source: Source = { reader: (first.body as ReadableStream<Uint8Array>).getReader(), controller, base, countAtOpen: 0 }
  let over = false
  let out: ReadableStreamDefaultController<Uint8Array> | undefined

  const finish = () => {
    over = true
    app?.removeEventListener('abort', onAppAbort)
  }
  /** Stops reading; on the app's abort, also asks the gateway to stop generating the rest. */
  const stop = (reason: unknown, cancelCall: boolean) => {
    if (over) return
    finish()
    source.controller.abort(reason)
    if (cancelCall && requestId !== undefined) sendCancel(run, base, requestId)
  }
  function onAppAbort(): void {
    if (over) return
    stop(app?.reason, true)
    out?.error(app?.reason)
  }
  app?.addEventListener('abort', onAppAbort, { once: true })

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      out = c
    },
    async pull(c) {
      for (;;) {
        let step: ReadableStreamReadResult<Uint8Array>
        try {
          step = await source.reader.read()
        } catch (error) {
          if (over) return
          try {
            source = await resume(run, splicer, source, requestId, error)
          } catch (final) {
            if (!over) finish()
            throw final
          }
          if (over) {
            source.controller.abort(app?.reason)
            return
          }
          continue
        }
        if (step.done) {
          finish()
          const rest = splicer.end()
          if (rest) c.enqueue(rest)
          c.close()
          return
        }
        const bytes = splicer.push(step.value)
        if (bytes) {
          c.enqueue(bytes)
          return
        }
      }
    },
    // A body cancelled without the app's abort is no cancel of the call: SDKs also cancel a body once its last
    // event came (openai 7 stops at `[DONE]`), and the ones that stop early abort their signal.
    cancel(reason) {
      stop(reason, false)
    },
  })
  return rebuilt(first, body, url)
}

/** What one request for the rest of a stream gave: a source, a failure to go on after, or word that only a replay can serve it. */
type Step = { source: Source } | { failure: Failure } | { replay: true }

/**
 * Opens the rest of a cut stream on the bases after the one that served it: the events after the ones passed on,
 * counted by `splicer`, from the Recoveries API. When the gateway does not know the stream there (it saw the stream
 * delivered whole, while a proxy still held its end, or the answer named no request id), the call is sent again with
 * its key: the gateway replays its kept answer from the start, and the events passed on already are dropped. Throws the
 * call's final error when no base can give the rest, or the attempts are spent.
 */
async function resume(run: CallRun, splicer: EventSplicer, cut: Source, requestId: string | undefined, error: unknown): Promise<Source> {
  splicer.cut()
  let base = cut.base
  // A source that added events before it broke did its part; one that added none counts as a failed request.
  let failure: Failure | undefined = splicer.count > cut.countAtOpen ? undefined : { reason: 'stream cut', error, unhealthy: true }
  let replay = requestId === undefined
  for (;;) {
    const next = run.next(base)
    if (failure) await run.failed(base, next, failure)
    base = next
    const step = replay ? await askAgain(run, base, splicer, error) : await askRest(run, base, requestId as string, splicer, error)
    if ('source' in step) return step.source
    if ('replay' in step) {
      replay = true
      failure = undefined
    } else failure = step.failure
  }
}

/** `GET {base}/v1/recoveries/{id}/stream` with `Last-Event-ID`: the events after the ones passed on. */
async function askRest(run: CallRun, base: number, requestId: string, splicer: EventSplicer, error: unknown): Promise<Step> {
  const url = recoveriesUrl(run.bases[base] as Base, requestId, 'stream', run.call.credentials.key)
  run.sent++
  run.emit({ type: 'resume', attempt: run.sent, requestId, lastEventId: splicer.count, url })
  const headers = recoveriesHeaders(run, { accept: 'text/event-stream', 'last-event-id': String(splicer.count) })
  const got = await exchange(run.cfg, run.call.signal, url, { method: 'GET', headers })
  if ('failure' in got) return got
  const { response, controller } = got
  if (response.ok && response.body && isEventStream(response)) {
    run.health.ok(base)
    return { source: { reader: response.body.getReader(), controller, base, countAtOpen: splicer.count } }
  }
  discard(response)
  if (response.status === 404) return { replay: true }
  return { failure: retryable(run, response, url, error) }
}

/** The call sent again with its key, accepted only as a replay of its kept answer (never a second run's other text). */
async function askAgain(run: CallRun, base: number, splicer: EventSplicer, error: unknown): Promise<Step> {
  const url = run.urlAt(base)
  run.sent++
  run.emit({ type: 'attempt', attempt: run.sent, url })
  const got = await exchange(run.cfg, run.call.signal, url, run.call.init)
  if ('failure' in got) return got
  const { response, controller } = got
  const replayed = response.headers.get('idempotent-replayed') === 'true'
  if (replayed) run.emit({ type: 'replay', requestId: run.saw(response), url })
  if (response.ok && response.body && isEventStream(response)) {
    if (!replayed) {
      discard(response)
      throw run.giveUp('The stream broke and the gateway kept no answer to replay: the call ran again and was dropped.', error)
    }
    run.health.ok(base)
    splicer.replayed()
    return { source: { reader: response.body.getReader(), controller, base, countAtOpen: splicer.count } }
  }
  discard(response)
  return { failure: retryable(run, response, url, error) }
}

/** The failure a non-stream answer stands for, when it says to try again; otherwise throws the call's final error. */
function retryable(run: CallRun, response: Response, url: string, error: unknown): Failure {
  const verdict = verdictOf(response.status, response.headers)
  if (!verdict.retry) throw run.giveUp(`The stream broke and could not be resumed: ${url} answered ${response.status}.`, error)
  return { reason: `status ${response.status}`, status: response.status, waitMs: verdict.waitMs, unhealthy: response.status >= 500 }
}
