/** The longest `retry-after` honoured; an answer asking for more is the app's to handle. */
export const MAX_RETRY_AFTER_MS = 60_000
/** What a 409 `idempotency_in_flight` without `retry-after` waits. */
const IN_FLIGHT_WAIT_MS = 1000
const BACKOFF_BASE_MS = 250
const BACKOFF_MAX_MS = 4000

/** What to do with an answer: hand it to the app, or try again (after `waitMs`, when the answer said how long). */
export type StatusVerdict = { retry: false } | { retry: true; waitMs: number | undefined }

const KEEP: StatusVerdict = { retry: false }

/**
 * Answers that say the call did not happen or is still running, so the same keyed request may be sent again: 408,
 * 409 (`idempotency_in_flight`), 429 with a `retry-after`, 502, 503, 504 and a CDN's 52x. Every other answer (a 4xx
 * is the request's fault, a 500 is an upstream's answer) goes to the app.
 */
export function verdictOf(status: number, headers: Headers): StatusVerdict {
  const hinted = retryAfterMs(headers)
  switch (status) {
    case 409:
      return hinted === undefined || hinted <= MAX_RETRY_AFTER_MS ? { retry: true, waitMs: hinted ?? IN_FLIGHT_WAIT_MS } : KEEP
    case 429:
      return hinted !== undefined && hinted <= MAX_RETRY_AFTER_MS ? { retry: true, waitMs: hinted } : KEEP
    case 408:
    case 502:
    case 503:
    case 504:
      return { retry: true, waitMs: hinted === undefined ? undefined : Math.min(hinted, MAX_RETRY_AFTER_MS) }
  }
  // Cloudflare's and other CDNs' own answers about the origin: unknown error, refused, timed out, TLS, …
  if (status >= 520 && status <= 530) return { retry: true, waitMs: undefined }
  return KEEP
}

/** `retry-after-ms` (the OpenAI APIs), or `retry-after` in seconds or as an HTTP date, in ms; undefined when absent. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const raw = headers.get('retry-after')
  if (raw === null) return undefined
  const seconds = Number.parseFloat(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** The pause before going back to a base already tried in this call: doubling per round, with jitter. */
export function backoffMs(round: number): number {
  const ceiling = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, round - 1), BACKOFF_MAX_MS)
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason)
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
