// The rate-limit headers a dialect's clients read, as a family each dialect names (`Dialect.rateLimits`).

/** An owner's rate-limit figures after a check, this call counted: what each header family tells its clients. */
export interface RateLimitFigures {
  /** Requests per minute: the limit and what is left of it; absent without that limit. */
  requests?: { limit: number; remaining: number }
  /** Tokens per minute: the limit and what is left of it; absent without that limit. */
  tokens?: { limit: number; remaining: number }
  /** Ms until the minute window starts anew. */
  resetMs: number
  /** When it does, in epoch ms. */
  resetAt: number
}

/** A family of rate-limit header names and how it writes an owner's figures. */
export interface RateLimitFamily {
  /** Every header name the family may write (for CORS to expose). */
  readonly names: readonly string[]
  /** The headers of `figures`. */
  headers(figures: RateLimitFigures): Record<string, string>
}
