import type { RateLimitFamily } from '../dialect.js'

/** Anthropic's rate-limit headers (`anthropic-ratelimit-*`), read by Anthropic's SDKs; the reset as an RFC 3339 time. */
export const anthropicRateLimits: RateLimitFamily = {
  names: [
    'anthropic-ratelimit-requests-limit',
    'anthropic-ratelimit-requests-remaining',
    'anthropic-ratelimit-requests-reset',
    'anthropic-ratelimit-tokens-limit',
    'anthropic-ratelimit-tokens-remaining',
    'anthropic-ratelimit-tokens-reset',
  ],
  headers(figures) {
    const headers: Record<string, string> = {}
    const reset = new Date(figures.resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z')
    for (const kind of ['requests', 'tokens'] as const) {
      const figure = figures[kind]
      if (!figure) continue
      headers[`anthropic-ratelimit-${kind}-limit`] = String(figure.limit)
      headers[`anthropic-ratelimit-${kind}-remaining`] = String(figure.remaining)
      headers[`anthropic-ratelimit-${kind}-reset`] = reset
    }
    return headers
  },
}
