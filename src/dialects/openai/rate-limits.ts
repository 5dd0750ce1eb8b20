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
    // Names written out, not built per call: this runs on every metered call's answer.
    const headers: Record<string, string> = {}
    const reset = `${Math.ceil(figures.resetMs / 1000)}s`
    const { requests, tokens } = figures
    if (requests) {
      headers['x-ratelimit-limit-requests'] = String(requests.limit)
      headers['x-ratelimit-remaining-requests'] = String(requests.remaining)
      headers['x-ratelimit-reset-requests'] = reset
    }
    if (tokens) {
      headers['x-ratelimit-limit-tokens'] = String(tokens.limit)
      headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining)
      headers['x-ratelimit-reset-tokens'] = reset
    }
    return headers
  },
}
