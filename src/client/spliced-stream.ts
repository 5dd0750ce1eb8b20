import type { CallRun } from './call-run.js'
import { EventSplicer } from './event-splicer.js'
import { discard, exchange, type Failure, isEventStream, rebuilt } from './exchange.js'
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
 * sees the cut. The app's abort (or the body's cancel) ends the source and asks the gateway to stop the call.
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
  /** The app no longer wants the rest: stop reading and ask the gateway to stop generating it. */
  const stop = (reason: unknown) => {
    if (over) return
    finish()
    source.controller.abort(reason)
    if (requestId !== undefined) sendCancel(run, base, requestId)
  }
  function onAppAbort(): void {
    if (over) return
    stop(app?.reason)
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
    cancel(reason) {
      stop(reason)
    },
  })
  return rebuilt(first, body, url)
}

/**
 * Opens the rest of a cut stream on the bases after the one that served it: the events after the ones passed on,
 * counted by `splicer`. Throws the call's final error when no base can give them (none of its answers says the call
 * is known, or the attempts are spent).
 */
async function resume(run: CallRun, splicer: EventSplicer, cut: Source, requestId: string | undefined, error: unknown): Promise<Source> {
  splicer.cut()
  if (requestId === undefined) throw run.giveUp('The stream broke and its answer carried no x-request-id to resume it with.', error)
  let base = cut.base
  // A source that added events before it broke did its part; one that added none counts as a failed request.
  let failure: Failure | undefined = splicer.count > cut.countAtOpen ? undefined : { reason: 'stream cut', error, unhealthy: true }
  for (;;) {
    const next = run.next(base)
    if (failure) await run.failed(base, next, failure)
    base = next
    const url = recoveriesUrl(run.bases[base] as Base, requestId, 'stream', run.call.credentials.key)
    run.sent++
    run.cfg.emit({ type: 'resume', attempt: run.sent, requestId, lastEventId: splicer.count, url })
    const headers = recoveriesHeaders(run, { accept: 'text/event-stream', 'last-event-id': String(splicer.count) })
    const got = await exchange(run.cfg, run.call.signal, url, { method: 'GET', headers })
    if ('failure' in got) {
      failure = got.failure
      continue
    }
    const { response, controller } = got
    if (response.ok && response.body && isEventStream(response)) {
      run.health.ok(base)
      return { reader: response.body.getReader(), controller, base, countAtOpen: splicer.count }
    }
    discard(response)
    const verdict = verdictOf(response.status, response.headers)
    if (!verdict.retry) {
      throw run.giveUp(`The stream broke and could not be resumed: ${url} answered ${response.status}.`, error)
    }
    failure = {
      reason: `resume answered ${response.status}`,
      status: response.status,
      waitMs: verdict.waitMs,
      unhealthy: response.status >= 500,
    }
  }
}
