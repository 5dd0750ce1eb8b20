import type { Dialect } from '../dialects/index.js'
import type { TokenCounts } from '../types.js'

/** The counts reported for a completed call whose upstream sent no usage (e.g. a chat stream without `include_usage`). */
export const NO_USAGE: Readonly<TokenCounts> = Object.freeze({ input_tokens: 0, output_tokens: 0, total_tokens: 0 })

/** Token counts of a complete JSON response body, or undefined when it is not JSON or carries none. */
export function usageOfBody(dialect: Dialect, body: Buffer): TokenCounts | undefined {
  try {
    return dialect.usage(JSON.parse(body.toString('utf8')))
  } catch {
    return undefined
  }
}
