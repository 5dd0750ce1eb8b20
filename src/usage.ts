import type { Endpoint } from './types.js'

/** Token counts in one shape for both formats. */
export interface TokenCounts {
  input_tokens: number
  output_tokens: number
  total_tokens: number
}

/** The counts reported for a completed call whose upstream sent no usage (e.g. a chat stream without `include_usage`). */
export const NO_USAGE: Readonly<TokenCounts> = Object.freeze({ input_tokens: 0, output_tokens: 0, total_tokens: 0 })

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0
}

/** Token counts of a response object of either format, or undefined when it carries none. */
export function usageOf(endpoint: Endpoint, response: unknown): TokenCounts | undefined {
  if (typeof response !== 'object' || response === null) return undefined
  if (endpoint === 'chat.completions') {
    const usage = (response as { usage?: Record<string, unknown> | null }).usage
    if (typeof usage !== 'object' || usage === null) return undefined
    const input = count(usage.prompt_tokens)
    const output = count(usage.completion_tokens)
    return { input_tokens: input, output_tokens: output, total_tokens: input + output }
  }
  const meta = (response as { usageMetadata?: Record<string, unknown> | null }).usageMetadata
  if (typeof meta !== 'object' || meta === null) return undefined
  // Tool-use prompt tokens are billed as input and thoughts as output.
  const input = count(meta.promptTokenCount) + count(meta.toolUsePromptTokenCount)
  const output = count(meta.candidatesTokenCount) + count(meta.thoughtsTokenCount)
  return { input_tokens: input, output_tokens: output, total_tokens: input + output }
}

/** Token counts of a complete JSON response body, or undefined when it is not JSON or carries none. */
export function usageOfBody(endpoint: Endpoint, body: Buffer): TokenCounts | undefined {
  try {
    return usageOf(endpoint, JSON.parse(body.toString('utf8')))
  } catch {
    return undefined
  }
}

const TAIL_BYTES = 64 * 1024

/**
 * Keeps the last few frames of a server-sent event stream, so the usage in its final frames can be read
 * at the end without parsing every frame on the way.
 */
export class StreamTail {
  private chunks: Buffer[] = []
  private size = 0

  /** Remembers a relayed chunk, forgetting the oldest beyond the tail size. */
  push(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.size += chunk.length
    while (this.size - (this.chunks[0] as Buffer).length >= TAIL_BYTES && this.chunks.length > 1) {
      this.size -= (this.chunks.shift() as Buffer).length
    }
  }

  /** Usage from the last event that carries one. */
  usage(endpoint: Endpoint): TokenCounts | undefined {
    const events = Buffer.concat(this.chunks).toString('utf8').split(/\r?\n\r?\n/)
    for (let i = events.length - 1; i >= 0; i--) {
      // Several `data:` lines of one event are joined with a line feed, as the SSE specification says.
      const lines: string[] = []
      for (const line of (events[i] as string).split(/\r?\n/)) {
        if (line.startsWith('data:')) lines.push(line.slice(line[5] === ' ' ? 6 : 5))
      }
      const data = lines.join('\n')
      if (data === '' || data === '[DONE]') continue
      let parsed: unknown
      try {
        parsed = JSON.parse(data)
      } catch {
        continue
      }
      const found = usageOf(endpoint, parsed)
      if (found) return found
    }
    return undefined
  }
}
