// Writing answers: whole bodies, delays that a departed client cancels, and streams paced frame by frame.

import { num } from './shared.mjs'

/**
 * Per-request state; `recorded` is the request's recording, whose `response` gathers what is written.
 * @typedef {{ timer: NodeJS.Timeout | null, closed: boolean, stream: boolean, selfDestroyed: boolean, headers: Record<string, string> | undefined, recorded?: { response: string } }} State
 */

/**
 * Answer with one complete body (and any `mock.headers`).
 * @param {import('node:http').ServerResponse} res @param {State} st @param {number} status @param {string} type @param {string} body
 */
export function send(res, st, status, type, body) {
  /** @type {Record<string, string | number>} */
  const h = { 'content-type': type, 'content-length': Buffer.byteLength(body) }
  if (st.headers) Object.assign(h, st.headers)
  res.writeHead(status, h)
  if (st.recorded) st.recorded.response = body
  res.end(body)
}

/** Run `fn` after `ms` (synchronously when 0), cancelled if the client goes away. @param {State} st @param {number} ms @param {() => void} fn */
export function after(st, ms, fn) {
  if (ms > 0) {
    st.timer = setTimeout(() => {
      st.timer = null
      if (!st.closed) fn()
    }, ms)
  } else fn()
}

/**
 * Write `frames` one by one (honouring backpressure and `frameDelay`), then end.
 * @param {import('node:http').ServerResponse} res @param {State} st @param {string[]} frames
 * @param {number} frameDelay @param {number | undefined} destroyAfter
 */
function pump(res, st, frames, frameDelay, destroyAfter) {
  let i = 0
  const step = () => {
    st.timer = null
    while (i < frames.length) {
      if (st.closed) return
      const frame = /** @type {string} */ (frames[i++])
      if (st.recorded) st.recorded.response += frame
      if (destroyAfter !== undefined && i >= destroyAfter) {
        st.selfDestroyed = true
        res.write(frame, () => res.socket?.destroy())
        return
      }
      const ok = res.write(frame)
      if (i === frames.length) break
      if (frameDelay > 0) {
        st.timer = setTimeout(step, frameDelay)
        return
      }
      if (!ok) {
        res.once('drain', step)
        return
      }
    }
    if (!st.closed) res.end()
  }
  step()
}

/**
 * Answer 200 with `frames` streamed as `mock.chunk_delay_ms` and `mock.destroy_after_frames` say.
 * @param {import('node:http').ServerResponse} res @param {State} st @param {string} type @param {string[]} frames @param {Record<string, any>} ctl
 */
export function stream(res, st, type, frames, ctl) {
  /** @type {Record<string, string>} */
  const h = { 'content-type': type, 'cache-control': 'no-cache' }
  if (st.headers) Object.assign(h, st.headers)
  res.writeHead(200, h)
  const da = num(ctl.destroy_after_frames)
  pump(res, st, frames, num(ctl.chunk_delay_ms) ?? 0, da === undefined ? undefined : Math.max(1, Math.floor(da)))
}
