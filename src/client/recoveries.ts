import type { CallRun } from './call-run.js'
import type { Base } from './options.js'

/**
 * `{base}/v1/recoveries/{requestId}/{action}`, with the caller's `?key=` when the call carried one. A base given with
 * the API version at its end (`…/v1`) still names the gateway's mount point.
 */
export function recoveriesUrl(base: Base, requestId: string, action: 'stream' | 'cancel', key: string | undefined): string {
  const mount = base.path.replace(/\/v1(?:beta)?$/, '')
  const query = key === undefined ? '' : `?key=${encodeURIComponent(key)}`
  return `${base.origin}${mount}/v1/recoveries/${encodeURIComponent(requestId)}/${action}${query}`
}

/** The caller's credentials plus `extra`, for a Recoveries request. */
export function recoveriesHeaders(run: CallRun, extra: Record<string, string>): Headers {
  const headers = new Headers(run.call.credentials.headers)
  for (const [name, value] of Object.entries(extra)) headers.set(name, value)
  return headers
}

/**
 * Asks the gateway to stop a call the app gave up on (`POST …/cancel`), at `base` first and at each other base when
 * one cannot be reached. Best effort and never awaited: the app has its abort already.
 */
export function sendCancel(run: CallRun, base: number, requestId: string): void {
  const { bases } = run
  const tryAt = async (step: number): Promise<void> => {
    if (step >= bases.length) return
    const at = (base + step) % bases.length
    const url = recoveriesUrl(bases[at] as Base, requestId, 'cancel', run.call.credentials.key)
    run.emit({ type: 'cancel', requestId, url })
    let status: number
    try {
      const response = await run.cfg.fetch(url, { method: 'POST', headers: recoveriesHeaders(run, {}) })
      status = response.status
      response.body?.cancel().catch(() => {})
    } catch {
      status = 0
    }
    if (status === 0 || status >= 500) await tryAt(step + 1)
  }
  tryAt(0).catch(() => {})
}
