import type { ClientConfig } from './options.js'

/** Why one request of a call did not give an answer to keep. */
export interface Failure {
  reason: string
  status?: number | undefined
  error?: unknown
  /** How long the answer asked to wait before the next try. */
  waitMs?: number | undefined
  /** Whether the base looks down (no answer, or a 5xx/52x), so later calls start elsewhere for a while. */
  unhealthy: boolean
}

/** One request's outcome: its response head (the body still to read), or why there was none. */
export type AttemptOutcome = { response: Response; controller: AbortController } | { failure: Failure }

/** The error an attempt is aborted with when its headers took longer than `attemptTimeoutMs`. */
function timeoutError(ms: number): Error {
  const error = new Error(`No response headers within ${ms} ms`)
  error.name = 'TimeoutError'
  return error
}

/**
 * Sends one request under its own AbortController, bounded by `attemptTimeoutMs` until its headers arrive. The app's
 * abort rejects at once with the app's reason; `late` then gets the request still under way, to learn what it can
 * from a head that arrives afterwards (and to end it).
 */
export async function exchange(
  cfg: ClientConfig,
  app: AbortSignal | undefined,
  url: string,
  init: RequestInit,
  late?: (pending: Promise<Response>, controller: AbortController) => void,
): Promise<AttemptOutcome> {
  if (app?.aborted) throw app.reason
  const controller = new AbortController()
  const ms = cfg.attemptTimeoutMs
  const timer = ms === undefined ? undefined : setTimeout(() => controller.abort(timeoutError(ms)), ms)
  let onAbort = (): void => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(app?.reason)
  })
  app?.addEventListener('abort', onAbort, { once: true })
  const pending = cfg.fetch(url, { ...init, signal: controller.signal })
  try {
    const response = await (app ? Promise.race([pending, aborted]) : pending)
    return { response, controller }
  } catch (error) {
    if (app?.aborted) {
      if (late) late(pending, controller)
      else controller.abort(app.reason)
      pending.catch(() => {})
      throw app.reason
    }
    const timedOut = controller.signal.aborted
    return {
      failure: { reason: timedOut ? 'timeout' : 'network error', error: timedOut ? controller.signal.reason : error, unhealthy: true },
    }
  } finally {
    clearTimeout(timer)
    app?.removeEventListener('abort', onAbort)
  }
}

/** Whether an answer is a server-sent event stream. */
export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream')
}

/** Lets go of an answer not handed to the app. */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => {})
}

/**
 * A response for the app with `body` in place of the received one: the same status and headers, less the ones that
 * described the bytes on the wire (the body is decoded), and the URL the answer came from.
 */
export function rebuilt(response: Response, body: BodyInit, url: string): Response {
  const headers = new Headers(response.headers)
  headers.delete('content-encoding')
  headers.delete('content-length')
  const out = new Response(body, { status: response.status, statusText: response.statusText, headers })
  Object.defineProperty(out, 'url', { value: response.url || url })
  return out
}
