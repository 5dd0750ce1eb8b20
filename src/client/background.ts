// Background mode (`background: true` in the options): a Responses call is created as a background response, a short
// request that answers at once with its id, and its result is then polled (a whole answer) or streamed by id and
// resumed from the last sequence number after a cut (a stream). No connection lasts as long as the model does, so no
// CDN or proxy limit on a connection's length, and no short client timeout, loses the answer; the app sees a normal
// response or stream.
import { discard, exchange, type Failure } from './attempt.js'
import type { CallRun } from './call-run.js'
import { atBase, type Base } from './options.js'
import { recoveriesHeaders } from './recoveries.js'
import { sendModelCall } from './send.js'
import { sleep } from './wait.js'

/** Statuses of a background response that has not ended. */
const RUNNING = new Set(['queued', 'in_progress'])
/** The stream events that end a Responses stream. */
const LAST_EVENTS = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error'])

/** Whether a call's path is a Responses create (`…/responses`), the one call background mode applies to. */
export const isResponsesCreate = (rest: string) => rest.split('?')[0]?.endsWith('/responses') === true

/** The request body with `background: true`, and whether it streams; undefined when it is no JSON object. */
export async function backgroundBody(body: BodyInit | null | undefined): Promise<{ text: string; stream: boolean } | undefined> {
  if (body === undefined || body === null) return undefined
  try {
    const value = JSON.parse(typeof body === 'string' ? body : await new Response(body).text()) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    const request = value as Record<string, unknown>
    // The create answers with the id at once; a stream is then read by id, where it can be resumed.
    return { text: JSON.stringify({ ...request, background: true, stream: false }), stream: request.stream === true }
  } catch {
    return undefined
  }
}

/** The URL of a background response (and `suffix` below it) at `base`. */
function responseUrl(run: CallRun, base: number, id: string, suffix = ''): string {
  const path = run.call.rest.split('?')[0] as string
  return atBase(run.cfg.bases[base] as Base, `${path}/${encodeURIComponent(id)}${suffix}`)
}

/** Asks the gateway to stop a background response the app gave up on; best effort, never awaited. */
function cancelResponse(run: CallRun, base: number, id: string): void {
  const url = responseUrl(run, base, id, '/cancel')
  run.emit({ type: 'cancel', requestId: id, url })
  run.cfg.fetch(url, { method: 'POST', headers: recoveriesHeaders(run, {}) }).then(discard, () => {})
}

/**
 * Creates the call as a background response (with the call's failover and `Idempotency-Key`), then polls it until it
 * ended (`backgroundPollMs` apart) or streams it by id. The app's abort cancels the response.
 */
export async function sendInBackground(run: CallRun, stream: boolean): Promise<Response> {
  const created = await sendModelCall(run)
  if (!created.ok) return created
  const object = (await created.json()) as { id?: unknown; status?: unknown }
  if (typeof object.id !== 'string') throw run.giveUp('The gateway answered a background create without an id.')
  const headers = new Headers(created.headers)
  headers.delete('content-length')
  if (stream) {
    headers.set('content-type', 'text/event-stream')
    return new Response(streamById(run, object.id), { status: 200, headers })
  }
  return new Response(JSON.stringify(await pollById(run, object.id, object)), { status: 200, headers })
}

/** Moves the call on to the next base after a failed request; throws once the call's budget of failures is spent. */
async function failOver(run: CallRun, base: number, failure: Failure): Promise<number> {
  const next = run.next(base)
  await run.failed(base, next, failure)
  return next
}

async function pollById(run: CallRun, id: string, first: { status?: unknown }): Promise<unknown> {
  const { signal } = run.call
  let base = run.call.base
  let now: { status?: unknown } = first
  while (RUNNING.has(String(now.status))) {
    try {
      await sleep(run.cfg.backgroundPollMs, signal)
    } catch (reason) {
      cancelResponse(run, base, id)
      throw reason
    }
    const got = await exchange(run.cfg, signal, responseUrl(run, base, id), { method: 'GET', headers: recoveriesHeaders(run, {}) })
    if ('failure' in got) {
      base = await failOver(run, base, got.failure)
      continue
    }
    const { response } = got
    if (response.status >= 500) {
      discard(response)
      base = await failOver(run, base, { reason: `status ${response.status}`, status: response.status, unhealthy: true })
      continue
    }
    if (!response.ok) throw run.giveUp(`The background response ${id} could not be read (status ${response.status}).`)
    now = (await response.json()) as { status?: unknown }
  }
  return now
}

/**
 * The response's events, read by id from the start and, after a cut, from the last whole event's `sequence_number`,
 * at the next base: the app reads one unbroken stream.
 */
function streamById(run: CallRun, id: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  const { signal } = run.call
  let base = run.call.base
  let after = -1
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  let held = ''
  let ended = false
  /** Passes on the whole events in `held`, noting the last one's number; true once the stream's last event came. */
  const whole = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    for (let end = held.indexOf('\n\n'); end !== -1; end = held.indexOf('\n\n')) {
      const event = held.slice(0, end + 2)
      held = held.slice(end + 2)
      const data = /^data: ?(.*)$/m.exec(event)?.[1]
      let parsed: { type?: unknown; sequence_number?: unknown } = {}
      try {
        parsed = data === undefined ? {} : (JSON.parse(data) as typeof parsed)
      } catch {
        // Not an event of the stream's (a comment): passed on as it is.
      }
      if (typeof parsed.sequence_number === 'number') after = parsed.sequence_number
      controller.enqueue(encoder.encode(event))
      if (typeof parsed.type === 'string' && LAST_EVENTS.has(parsed.type)) ended = true
    }
  }
  const open = async (): Promise<ReadableStreamDefaultReader<Uint8Array>> => {
    for (;;) {
      const query = after < 0 ? '?stream=true' : `?stream=true&starting_after=${after}`
      const url = responseUrl(run, base, id, query)
      if (after >= 0) run.emit({ type: 'resume', attempt: run.sent + 1, requestId: id, lastEventId: after, url })
      run.sent++
      const got = await exchange(run.cfg, signal, url, { method: 'GET', headers: recoveriesHeaders(run, {}) })
      if ('failure' in got) base = await failOver(run, base, got.failure)
      else if (got.response.ok && got.response.body) return got.response.body.getReader()
      else if (got.response.status >= 500) {
        discard(got.response)
        base = await failOver(run, base, { reason: `status ${got.response.status}`, status: got.response.status, unhealthy: true })
      } else throw run.giveUp(`The background response ${id} could not be streamed (status ${got.response.status}).`)
    }
  }
  signal?.addEventListener(
    'abort',
    () => {
      if (!ended) cancelResponse(run, base, id)
      reader?.cancel(signal.reason).catch(() => {})
    },
    { once: true },
  )
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          if (ended) return controller.close()
          reader ??= await open()
          let chunk: ReadableStreamReadResult<Uint8Array>
          try {
            chunk = await reader.read()
          } catch (error) {
            if (signal?.aborted) throw signal.reason
            // Cut: what came of an unfinished event is dropped and asked for again after the last whole one.
            reader = undefined
            held = ''
            base = await failOver(run, base, { reason: 'stream cut', error, unhealthy: true })
            continue
          }
          // The gateway ends a stream only once the response ended; an app that aborted gets its reason.
          if (chunk.done) {
            if (signal?.aborted) throw signal.reason
            return controller.close()
          }
          held += decoder.decode(chunk.value, { stream: true })
          whole(controller)
          if (controller.desiredSize !== null && controller.desiredSize <= 0) return
        }
      } catch (error) {
        controller.error(error)
      }
    },
    cancel() {
      // The app stopped reading: it no longer wants the answer.
      if (!ended) cancelResponse(run, base, id)
      reader?.cancel().catch(() => {})
    },
  })
}
