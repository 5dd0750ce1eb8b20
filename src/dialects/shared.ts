// Small pieces the dialects read the same way.
import type { HubResponse } from '../translate/hub.js'
import type { TokenCounts } from '../types.js'
import type { StreamUsageReader } from './dialect.js'

/** A token count as reported, or 0 when it is missing, negative or not a number. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0
}

/** Token counts from their parts; `input` and `output` include the cached, cache-write and reasoning tokens. */
export function tokenCounts(input: number, output: number, cachedInput = 0, cacheWrite = 0, reasoning = 0): TokenCounts {
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    cached_input_tokens: Math.min(cachedInput, input),
    cache_write_tokens: Math.min(cacheWrite, input),
    reasoning_tokens: Math.min(reasoning, output),
  }
}

/** A member of a `…_details` object of a usage object, as a token count. */
export function detailCount(details: unknown, field: string): number {
  return typeof details === 'object' && details !== null ? tokenCount((details as Record<string, unknown>)[field]) : 0
}

/** The key of an `Authorization: Bearer <key>` header. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined
  // As every SDK writes it ("Bearer " and visible ASCII), read without the expression, which costs more than the key.
  if (header.startsWith('Bearer ') && header.length > 7 && visibleAscii(header, 7)) return header.slice(7)
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match?.[1]
}

/** Whether every character of `text` from `from` on is visible ASCII (no space, control or other character). */
function visibleAscii(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c <= 0x20 || c >= 0x7f) return false
  }
  return true
}

/** A credential header's value without its scheme (`Bearer`, `Basic`), trimmed: the secret itself. */
export function withoutAuthScheme(value: string): string {
  return value.replace(/^\s*(Bearer|Basic)\s+/i, '').trim()
}

/** The most choices whose finish reasons are read (OpenAI allows `n` up to 128); an index past it is not trusted. */
export const MAX_CHOICES = 128
/** The longest finish reason kept: the providers' own are single words, so a longer one is not a reason. */
export const MAX_REASON_LENGTH = 64

/** Writes `choice[field]` of each choice in `choices` into `reasons` at the choice's `index` (else its position). */
export function choiceReasons(choices: unknown, field: string, reasons: string[]): void {
  if (!Array.isArray(choices)) return
  for (let i = 0; i < choices.length && i < MAX_CHOICES; i++) {
    const choice: unknown = choices[i]
    if (typeof choice !== 'object' || choice === null) continue
    const reason = (choice as Record<string, unknown>)[field]
    if (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH) continue
    const index = (choice as Record<string, unknown>).index
    reasons[typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < MAX_CHOICES ? index : i] = reason
  }
}

/** The reasons `choiceReasons` wrote, in choice order without gaps; undefined when there are none. */
export function reasonList(reasons: readonly string[]): string[] | undefined {
  if (reasons.length === 0) return undefined
  const list: string[] = []
  // Choices that said nothing left holes: they are skipped, so the list holds only reasons given.
  for (let i = 0; i < reasons.length; i++) if (reasons[i] !== undefined) list.push(reasons[i] as string)
  return list.length === 0 ? undefined : list
}

/**
 * A stream usage reader for a dialect whose events each carry the whole usage so far: the newest event that has one
 * says it all (OpenAI's final chunk or `response.completed`, Gemini's last `usageMetadata`).
 */
export function newestUsage(usageOf: (event: unknown) => TokenCounts | undefined): () => StreamUsageReader {
  return () => {
    let found: TokenCounts | undefined
    return {
      event(event) {
        found ??= usageOf(event)
      },
      get complete() {
        return found !== undefined
      },
      usage: () => found,
    }
  }
}

/** The hub answer of an upstream's token count: `counted` input tokens (0 when not a whole count), nothing else. */
export function countedHubResponse(counted: unknown): HubResponse {
  const input = typeof counted === 'number' && Number.isSafeInteger(counted) && counted >= 0 ? counted : 0
  const usage = {
    input,
    output: 0,
    total: input,
    cachedInput: undefined,
    cacheWrite: undefined,
    reasoning: undefined,
    toolPrompt: undefined,
  }
  return { id: undefined, model: undefined, created: undefined, choices: [], usage, blocked: undefined }
}
