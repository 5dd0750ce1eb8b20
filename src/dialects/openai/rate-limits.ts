import type { RateLimitFamily } from '../dialect.js'

/**
 * OpenAI's rate-limit headers (`x-ratelimit-*`), read by OpenAI's SDKs and the many clients that copy them; the reset
 * as a duration.
 */
export const openaiRateLimits: RateLimitFamily = {
  names: [
    'x-ratelimit-limit-requests',
    'x-ratelimit-remaining-requests',
    'x-ratelimit-reset-requests',
    'x-ratelimit-limit-tokens',
    'x-ratelimit-remaining-tokens',
    'x-ratelimit-reset-tokens',
  ],
  headers(figures) {
    const headers: Record<string, string> = {}
    const reset = `${Math.ceil(figures.resetMs / 1000)}s`
    for (const kind of ['requests', 'tokens'] as const) {
      const figure = figures[kind]
      if (!figure) continue
      headers[`x-ratelimit-limit-${kind}`] = String(figure.limit)
      headers[`x-ratelimit-remaining-${kind}`] = String(figure.remaining)
      headers[`x-ratelimit-reset-${kind}`] = reset
    }
    return headers
  },
}
