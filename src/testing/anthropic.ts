// Anthropic's Messages API around the messages themselves: its headers (`x-api-key`, `anthropic-version`), its
// error bodies, its model list and token counting. The messages, whole and streamed, are in anthropic-messages.ts.

import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { type State, send } from './respond.js'
import { JSON_TYPE, type JsonObject, tokens } from './shared.js'

/** The API versions Anthropic serves; a request must name one in `anthropic-version`. */
const VERSIONS = new Set(['2023-01-01', '2023-06-01', '2026-10-21'])

/** The version that refuses the sampling parameters, even at their defaults. */
export const VERSION_WITHOUT_SAMPLING = '2026-10-21'

/** The sampling parameters that version refuses. */
const SAMPLING = new Set(['temperature', 'top_p', 'top_k'])

/** Anthropic's error type for each status it answers with. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

/** The error type of a status: other 4xx are invalid requests, other 5xx API errors. */
const errorType = (status: number): string => ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')

/** Headers an Anthropic answer starts with: the request id the SDK reads (`request-id`), also in every error body. */
export const anthropicHeaders = (requestId: string): JsonObject => ({ 'request-id': requestId })

/** Answer an error in Anthropic's shape, with the request id of the answer's headers. */
export function sendAnthropicError(res: ServerResponse, st: State, status: number, message: string): void {
  const requestId = st.headers?.['request-id']
  const body = { type: 'error', error: { type: errorType(status), message }, request_id: typeof requestId === 'string' ? requestId : null }
  send(res, st, status, JSON_TYPE, JSON.stringify(body))
}

/**
 * Anthropic's 401 message for a request without `key`, or undefined when it carries it. The key comes in `x-api-key`
 * (Claude Code, `@ai-sdk/anthropic`) or as a Bearer token (the Anthropic SDK ≥ 1.0); `x-api-key` wins when both are sent.
 */
export function keyProblem(headers: IncomingHttpHeaders, key: string): string | undefined {
  const header = headers['x-api-key']
  const auth = headers.authorization
  const sent = typeof header === 'string' ? header : auth?.startsWith('Bearer ') ? auth.slice(7) : undefined
  if (sent === undefined || sent === '') return 'x-api-key header is required'
  return sent === key ? undefined : 'invalid x-api-key'
}

/** Anthropic's 400 message for a request without a valid `anthropic-version`, or undefined. */
export function versionProblem(headers: IncomingHttpHeaders): string | undefined {
  const version = headers['anthropic-version']
  if (typeof version !== 'string' || version === '') return 'anthropic-version: header is required'
  return VERSIONS.has(version) ? undefined : `anthropic-version: "${version}" is not a valid version`
}

/** Text of a message content, a system prompt or a tool result: a string, or the text of its blocks (tool results' too). */
export function blocksText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let s = ''
  for (const block of content) {
    if (!isObject(block)) continue
    if (typeof block.text === 'string') s += block.text
    else if (block.type === 'tool_result') s += blocksText(block.content)
  }
  return s
}

/** The prompt's tokens as both a message's usage and a token count report them: the system prompt and every message. */
export function promptTokens(body: JsonObject & { messages: unknown[] }): number {
  let length = blocksText(body.system).length
  for (const message of body.messages) if (isObject(message)) length += blocksText(message.content).length
  return tokens(length)
}

const ROLES = new Set(['user', 'assistant', 'system'])

/**
 * Anthropic's 400 message for what is wrong at the top of a Messages or token-count body, or undefined: a field it does
 * not know (`known`; the sampling ones too under `version` 2026-10-21), then `model` and `messages`.
 */
export function fieldProblem(body: JsonObject, known: ReadonlySet<string>, version: unknown): string | undefined {
  for (const key of Object.keys(body)) {
    if (!known.has(key) || (version === VERSION_WITHOUT_SAMPLING && SAMPLING.has(key))) return `${key}: Extra inputs are not permitted`
  }
  if (body.model === undefined) return 'model: Field required'
  if (typeof body.model !== 'string') return 'model: Input should be a valid string'
  if (body.messages === undefined) return 'messages: Field required'
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list'
  for (const [i, message] of body.messages.entries()) {
    if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`
    if (!ROLES.has(String(message.role))) return `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `messages.${i}.content: Input should be a valid list`
  }
  return undefined
}

/** The fields of a token-count request (`MessageCountTokensParams`, beta ones included), and the mock's own `mock`. */
const COUNT_FIELDS = new Set([
  'messages',
  'model',
  'billing_policy',
  'cache_control',
  'compaction',
  'context_management',
  'mcp_servers',
  'output_config',
  'output_format',
  'speed',
  'system',
  'thinking',
  'tool_choice',
  'tools',
  'user_profile_id',
  'workspace_id',
  'mock',
])

/**
 * Answer `POST /v1/messages/count_tokens`: 400 for a field it does not take (`max_tokens` and `stream` among them) or
 * without `model` and `messages`, else `{ input_tokens }`, the count a message for the same body reports.
 */
export function answerCountTokens(body: JsonObject, version: unknown, res: ServerResponse, st: State): void {
  const problem = fieldProblem(body, COUNT_FIELDS, version)
  if (problem !== undefined) {
    sendAnthropicError(res, st, 400, problem)
    return
  }
  const messages = Array.isArray(body.messages) ? body.messages : []
  send(res, st, 200, JSON_TYPE, JSON.stringify({ input_tokens: promptTokens({ ...body, messages }) }))
}

/** The models the mock lists, newest first as Anthropic lists them. */
const MODELS = [
  { type: 'model', id: 'claude-opus-4-5', display_name: 'Claude Opus 4.5', created_at: '2025-11-24T00:00:00Z' },
  { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
]

/** The path of one model, capturing its id. */
const MODEL_PATH = /^\/v1\/models\/([^/]+)$/

/** True for the paths of the model list and of one model. */
export const isModelsPath = (pathname: string): boolean => pathname === '/v1/models' || MODEL_PATH.test(pathname)

/** A page of the list: its models, whether more lie beyond it, and its first and last ids. */
function page(data: typeof MODELS, hasMore: boolean) {
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
}

/** The page of models after `after_id` or before `before_id`, at most `limit` (default 20) of them. */
function modelPage(params: URLSearchParams | null) {
  const limit = Math.max(1, Math.min(1000, Number(params?.get('limit') ?? 20) || 20))
  const at = (id: string) => MODELS.findIndex((m) => m.id === id)
  const before = params?.get('before_id')
  if (before) {
    const end = Math.max(0, at(before))
    const start = Math.max(0, end - limit)
    return page(MODELS.slice(start, end), start > 0)
  }
  const after = params?.get('after_id')
  const start = after ? at(after) + 1 : 0
  return page(MODELS.slice(start, start + limit), start + limit < MODELS.length)
}

/** Answer `GET /v1/models` (a page, as `limit`, `after_id` and `before_id` ask) or `GET /v1/models/{id}` in Anthropic's shape. */
export function answerModels(pathname: string, params: URLSearchParams | null, res: ServerResponse, st: State): void {
  const one = MODEL_PATH.exec(pathname)
  if (one === null) {
    send(res, st, 200, JSON_TYPE, JSON.stringify(modelPage(params)))
    return
  }
  let id = one[1] ?? ''
  try {
    id = decodeURIComponent(id)
  } catch {}
  const model = MODELS.find((m) => m.id === id)
  if (model === undefined) sendAnthropicError(res, st, 404, `model: ${id}`)
  else send(res, st, 200, JSON_TYPE, JSON.stringify(model))
}
