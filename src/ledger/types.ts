// The ledger's public types: prices, an owner's limits and what it used (re-exported by src/types.ts).

/** One owner's rate limits and budget; a limit left out is no limit. */
export interface OwnerLimits {
  /** Model calls that may start in one minute (a fixed window, every dialect counted together). */
  requestsPerMinute?: number
  /** Tokens (input + output, as upstreams report them) that may be used in one minute. */
  tokensPerMinute?: number
  /** USD that may be spent in one UTC day, priced by `pricing`. */
  costPerDay?: number
}

/** A model's prices in USD per million tokens. */
export interface ModelPrice {
  /** Input (prompt) tokens. */
  input: number
  /** Input tokens read from a prompt cache. @default input */
  cachedInput?: number
  /** Input tokens written to a prompt cache. @default input */
  cacheWrite?: number
  /** Output tokens. */
  output: number
  /** Reasoning (thinking) tokens. @default output */
  reasoning?: number
}

/** What an owner used in its current windows, as `gateway.usage(owner)` answers. */
export interface OwnerUsage {
  /** Model calls started this minute. */
  requests: number
  /** Tokens used this minute. */
  tokens: number
  /** Nano-dollars (USD × 10⁹) spent this UTC day. */
  cost: number
}
