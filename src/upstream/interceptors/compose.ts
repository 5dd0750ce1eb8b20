import type { Send } from '../send.js'

/** Wraps a `Send` with one concern (a key pool, a fallback, a retry, tracing), undici-style. */
export type UpstreamInterceptor = (next: Send) => Send

/**
 * Wraps `send` in `interceptors` once, the first outermost: `outermostFirst([a, b], send)` is `a(b(send))`, so a
 * call reaches `a` first and `send` last. Named for its order rather than `compose`, which reads both ways: undici's
 * `dispatcher.compose(a, b)` makes the last one outermost, function composition the first.
 */
export function outermostFirst(interceptors: readonly UpstreamInterceptor[], send: Send): Send {
  let wrapped = send
  for (let i = interceptors.length - 1; i >= 0; i--) wrapped = (interceptors[i] as UpstreamInterceptor)(wrapped)
  return wrapped
}
