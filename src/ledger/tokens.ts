// Token counts as the ledger takes them from an upstream: whole, non-negative and bounded, so pricing never throws
// and the memory and Redis counters add the same integers.
import type { GatewayLogger, TokenCounts } from '../types.js'

/** The most tokens one call is counted for, per count: no model reads or writes more in one call. */
export const MAX_TOKENS_PER_CALL = 100_000_000

/** How often an upstream's bad figures are told: one warn line per interval, with a count of those in between. */
const TELL_INTERVAL_MS = 60_000

const FIELDS = [
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
] as const satisfies ReadonlyArray<keyof TokenCounts>

/** One count as charged: a fraction rounded up (never down: a figure cannot buy tokens), capped at the bound. */
function wholeCount(value: number): number {
  if (!(value > 0)) return 0
  return value >= MAX_TOKENS_PER_CALL ? MAX_TOKENS_PER_CALL : Math.ceil(value)
}

/** Whether every count is a whole number within the bound: the common case costs no copy. */
function inBounds(usage: TokenCounts): boolean {
  for (const field of FIELDS) {
    const value = usage[field]
    if (!Number.isInteger(value) || value < 0 || value > MAX_TOKENS_PER_CALL) return false
  }
  return true
}

/**
 * Keeps an upstream's token counts within what the ledger takes, telling of a bad figure once per interval (the
 * model, never the call's content). Hands back `usage` itself when it needs nothing.
 */
export class TokenCountCheck {
  readonly #logger: GatewayLogger
  #last = Number.NEGATIVE_INFINITY
  #suppressed = 0

  constructor(logger: GatewayLogger) {
    this.#logger = logger
  }

  /** The counts as charged and reported: each a whole number from 0 to `MAX_TOKENS_PER_CALL`, the total the sum of input and output. */
  checked(usage: TokenCounts, model: string): TokenCounts {
    if (inBounds(usage)) return usage
    const input = wholeCount(usage.input_tokens)
    const output = wholeCount(usage.output_tokens)
    const fixed: TokenCounts = {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      cached_input_tokens: Math.min(wholeCount(usage.cached_input_tokens), input),
      cache_write_tokens: Math.min(wholeCount(usage.cache_write_tokens), input),
      reasoning_tokens: Math.min(wholeCount(usage.reasoning_tokens), output),
    }
    this.#tell(usage, model)
    return fixed
  }

  #tell(usage: TokenCounts, model: string): void {
    const now = Date.now()
    if (now - this.#last < TELL_INTERVAL_MS) {
      this.#suppressed++
      return
    }
    this.#last = now
    const figures: Record<string, number> = {}
    for (const field of FIELDS) figures[field] = usage[field]
    this.#logger.warn('model-gateway: an upstream reported token counts that are not whole numbers within the bound; they were clamped', {
      model,
      figures,
      bound: MAX_TOKENS_PER_CALL,
      ...(this.#suppressed > 0 ? { suppressed: this.#suppressed } : {}),
    })
    this.#suppressed = 0
  }
}
