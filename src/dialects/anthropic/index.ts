import type { IncomingHttpHeaders } from 'node:http'
import type { Operation, TokenCounts } from '../../types.js'
import type { Dialect, ListedModel, StreamUsageReader } from '../dialect.js'
import { bearer, tokenCount, tokenCounts } from '../shared.js'
import { messagesCountUpstreamFormat } from './messages/count.js'
import { messagesFormat } from './messages/index.js'
import { messages, messagesCountTokens } from './operations.js'
import { anthropicRateLimits } from './rate-limits.js'
import { anthropicErrorBody } from './status.js'

/** An API version as Anthropic names them: the date it was published, `YYYY-MM-DD`. */
function versionProblem(value: unknown): string | undefined {
  const date = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined
  if (date && !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value as string)) return undefined
  return "must be an Anthropic API version, a date such as '2023-06-01'"
}

/** `x-api-key` (what Claude Code and `@ai-sdk/anthropic` send), else `Authorization: Bearer` (the Anthropic SDK ≥ 1.0). */
function clientKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key']
  if (typeof header === 'string' && header.trim() !== '') return header.trim()
  return bearer(headers.authorization)
}

/**
 * Anthropic's model object, every member the SDK's `ModelInfo` requires: `created_at` the release time (RFC 3339; the
 * epoch when unknown, as Anthropic says it), the token limits configured (else null), and null for what only
 * Anthropic knows of its own models (`capabilities`, `line`), an offered model being `active`.
 */
function modelObject(model: ListedModel) {
  return {
    type: 'model',
    id: model.id,
    display_name: model.id,
    created_at: new Date((model.released ?? 0) * 1000).toISOString(),
    max_input_tokens: model.contextWindow ?? null,
    max_tokens: model.maxOutputTokens ?? null,
    capabilities: null,
    lifecycle: 'active',
    line: null,
    deprecated_at: null,
    retires_at: null,
  }
}

/** The members of an Anthropic `usage` object the gateway counts. */
type UsageFields = { input: number; cacheWrite: number; cacheRead: number; output: number }
const USAGE_KEYS: Readonly<Record<keyof UsageFields, string>> = {
  input: 'input_tokens',
  cacheWrite: 'cache_creation_input_tokens',
  cacheRead: 'cache_read_input_tokens',
  output: 'output_tokens',
}

/** Input is every prompt token, cached or written to the cache; output the generated ones. */
function countsOf(fields: Partial<UsageFields>): TokenCounts {
  const input = (fields.input ?? 0) + (fields.cacheWrite ?? 0) + (fields.cacheRead ?? 0)
  // Thinking tokens are billed as output and not reported apart.
  return tokenCounts(input, fields.output ?? 0, fields.cacheRead ?? 0, fields.cacheWrite ?? 0)
}

/** The `usage` object of a message, a `message_start` event (in its `message`) or a `message_delta` event. */
function usageObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const { usage, message } = body as { usage?: unknown; message?: unknown }
  const found = usage ?? (typeof message === 'object' && message !== null ? (message as { usage?: unknown }).usage : undefined)
  return typeof found === 'object' && found !== null ? (found as Record<string, unknown>) : undefined
}

function usage(body: unknown): TokenCounts | undefined {
  const object = usageObject(body)
  if (!object) return undefined
  return countsOf({
    input: tokenCount(object.input_tokens),
    cacheWrite: tokenCount(object.cache_creation_input_tokens),
    cacheRead: tokenCount(object.cache_read_input_tokens),
    output: tokenCount(object.output_tokens),
  })
}

/**
 * A stream's usage: `message_start` reports the input counts (and a first output count), each `message_delta` the
 * cumulative counts so far (output, and input ones too since 2025). Read newest first, each count is the first seen;
 * nothing older than `message_start` can change them.
 */
function streamUsage(): StreamUsageReader {
  const seen: Partial<UsageFields> = {}
  let started = false
  let any = false
  return {
    event(event) {
      const object = usageObject(event)
      if (!object) return
      any = true
      for (const key of Object.keys(USAGE_KEYS) as (keyof UsageFields)[]) {
        const value = object[USAGE_KEYS[key]]
        if (seen[key] === undefined && typeof value === 'number') seen[key] = tokenCount(value)
      }
      if ((event as { type?: unknown }).type === 'message_start') started = true
    },
    get complete() {
      return started
    },
    usage: () => (any ? countsOf(seen) : undefined),
  }
}

/** Why a message (or a `message_delta` event's delta) stopped. */
function finishReasons(response: unknown, reasons: string[]): void {
  if (typeof response !== 'object' || response === null) return
  const { stop_reason: whole, delta } = response as { stop_reason?: unknown; delta?: unknown }
  const reason = whole ?? (typeof delta === 'object' && delta !== null ? (delta as { stop_reason?: unknown }).stop_reason : undefined)
  if (typeof reason === 'string' && reason.length <= 64) reasons[0] = reason
}

/** The path of each operation below an Anthropic upstream's base (a Vertex client's count is passthrough too). */
const UPSTREAM_PATHS: Partial<Record<Operation, string>> = {
  'messages.countTokens': '/v1/messages/count_tokens',
  'vertex.countTokens': '/v1/messages/count_tokens',
}

/** The Anthropic wire format: Messages, `x-api-key`, `{ type: 'error', error: { type, message }, request_id }`. */
export const anthropic: Dialect<'anthropic'> = {
  name: 'anthropic',
  upstreamsCalled: 'Anthropic',
  routes: [
    { path: '/v1/messages', format: messages },
    { path: '/v1/messages/count_tokens', format: messagesCountTokens },
  ],
  modelListPaths: ['/v1/models'],
  keyHint: '`x-api-key` or `Authorization: Bearer <key>`',
  clientHeaders: ['x-api-key', 'anthropic-version', 'anthropic-beta', 'anthropic-dangerous-direct-browser-access'],
  // What the client asked of the API: its version and the betas it opted into (Claude Code's features need them).
  forwardedHeaders: ['anthropic-version', 'anthropic-beta'],
  upstreamOptions: { anthropicVersion: { header: 'anthropic-version', default: '2023-06-01', problem: versionProblem } },
  // The Anthropic SDK reports the request id it reads from `request-id` (`_request_id`, errors' `requestID`).
  requestIdHeader: 'request-id',
  retryAfterOn429: true,
  rateLimits: anthropicRateLimits,
  upstreamFormat: messagesFormat,
  translatedOperation: 'messages',
  // A count of another format (a Gemini `:countTokens`, a Bedrock CountTokens client's) on an Anthropic model.
  countingApi: { format: messagesCountUpstreamFormat, operation: 'messages.countTokens' },
  otelProviderName: 'anthropic',
  clientKey,
  // Every Anthropic client sends the API version it speaks.
  recognises: (headers) => headers['anthropic-version'] !== undefined,
  modelList: (models) => ({
    data: models.map(modelObject),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models[models.length - 1]?.id ?? null,
  }),
  modelObject,
  errorBody: anthropicErrorBody,
  // The Anthropic SDK reads only events with an `event:` line: the id goes inside the event's own block.
  numberedEvent: (event, id) => Buffer.concat([Buffer.from(`id: ${id}\n`), event]),
  usageField: 'usage',
  usage,
  streamUsage,
  finishReasonField: 'stop_reason',
  finishReasons,
  // Anthropic documents its base URL without a version; one copied with `/v1` still works.
  upstreamBasePath: (pathname) => pathname.replace(/\/+$/, '').replace(/\/v1$/, ''),
  // A base URL copied with the endpoint on it (`…/v1/messages`): the SDK's base URL is the host alone.
  intendedBasePath: (pathname) => /^(.*?)(?:\/v1)?\/messages(?:\/count_tokens|\/batches)?$/.exec(pathname.replace(/\/+$/, ''))?.[1],
  upstreamModelProblem: () => undefined,
  upstreamPath: (basePath, _upstreamModel, operation) => `${basePath}${UPSTREAM_PATHS[operation] ?? '/v1/messages'}`,
  upstreamAuthHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
}

export { messages, messagesCountTokens } from './operations.js'
export { anthropicErrorBody, anthropicErrorType } from './status.js'
