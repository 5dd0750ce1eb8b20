import type { Send } from '../send.js'

/** Wraps a `Send` with one concern (a key pool, a fallback, a retry, tracing), undici-style. */
export type UpstreamInterceptor = (next: Send) => Send

/** Composes interceptors once, the first outermost: `compose([a, b], send)` is `a(b(send))`. */
export function compose(interceptors: readonly UpstreamInterceptor[], send: Send): Send {
  let composed = send
  for (let i = interceptors.length - 1; i >= 0; i--) composed = (interceptors[i] as UpstreamInterceptor)(composed)
  return composed
}
