import type { Operation, TokenCounts } from '../../types.js'
import type { Dialect, ListedModel, UpstreamApi } from '../dialect.js'
import { bearer, choiceReasons, detailCount, newestUsage, tokenCount, tokenCounts } from '../shared.js'
import { chatCompletionsFormat } from './chat-completions/index.js'
import { chatCompletions, embeddings, responses } from './operations.js'
import { openaiRateLimits } from './rate-limits.js'
import { responsesBackground } from './responses/background.js'
import { inputTokensFormat } from './responses/count.js'
import { responsesFormat } from './responses/index.js'
import { responsesWebSocket } from './responses/websocket.js'

/**
 * Token counts of a `usage` object: chat completions say `prompt_tokens` (details in `prompt_tokens_details`),
 * Responses say `input_tokens` (details in `input_tokens_details`); cached and reasoning tokens are parts of them.
 */
function counts(usage: unknown): TokenCounts | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined
  const fields = usage as Record<string, unknown>
  const input = tokenCount(fields.prompt_tokens ?? fields.input_tokens)
  const output = tokenCount(fields.completion_tokens ?? fields.output_tokens)
  const inputDetails = fields.prompt_tokens_details ?? fields.input_tokens_details
  const outputDetails = fields.completion_tokens_details ?? fields.output_tokens_details
  return tokenCounts(input, output, detailCount(inputDetails, 'cached_tokens'), 0, detailCount(outputDetails, 'reasoning_tokens'))
}

/** The usage of a chat completion or chunk, a Responses object, or a Responses stream event (in its `response`). */
function usage(body: unknown): TokenCounts | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const { usage, response } = body as { usage?: unknown; response?: unknown }
  if (usage !== undefined && usage !== null) return counts(usage)
  return typeof response === 'object' && response !== null ? counts((response as { usage?: unknown }).usage) : undefined
}

function modelObject(model: ListedModel) {
  return { id: model.id, object: 'model', created: model.created, owned_by: model.ownedBy }
}

/**
 * The path below the base URL of each operation an OpenAI-compatible upstream serves besides chat completions: a
 * Responses call is a Responses client's own, or one translated for an upstream with `api: 'responses'`.
 */
const UPSTREAM_PATHS: Partial<Record<Operation, string>> = {
  embeddings: '/embeddings',
  responses: '/responses',
  // An Anthropic client's token count, translated for OpenAI's input-token counting endpoint.
  'messages.countTokens': '/responses/input_tokens',
}

/** The APIs a translated call can take to an OpenAI upstream, by its `api` option. */
const UPSTREAM_APIS: Readonly<Record<string, UpstreamApi>> = {
  // Chat completions is what every OpenAI-compatible API serves.
  chat: { format: chatCompletionsFormat, operation: 'chat.completions' },
  // Some models (`gpt-5-codex`, `o3-pro`) are served by the Responses API alone.
  responses: { format: responsesFormat, operation: 'responses' },
}

/** The OpenAI wire format: chat completions and Responses, Bearer keys, `{ error: { message, type, param, code } }`. */
export const openai: Dialect<'openai'> = {
  name: 'openai',
  upstreamsCalled: 'OpenAI-compatible',
  routes: [
    { path: '/v1/chat/completions', format: chatCompletions },
    { path: '/v1/responses', format: responses, background: responsesBackground, websocket: responsesWebSocket },
    { path: '/v1/embeddings', format: embeddings },
  ],
  modelListPaths: ['/v1/models'],
  keyHint: '`Authorization: Bearer <key>`',
  keyHeader: { name: 'authorization', prefix: 'Bearer ' },
  clientHeaders: ['authorization', 'openai-organization', 'openai-project'],
  upstreamOptions: {
    // No call carries it: it picks the API calls translated from another dialect take.
    api: {
      default: 'chat',
      problem: (value) => (typeof value === 'string' && Object.hasOwn(UPSTREAM_APIS, value) ? undefined : "must be 'chat' or 'responses'"),
    },
  },
  // A translated call reaches an OpenAI-compatible upstream as chat completions unless it is configured otherwise.
  upstreamFormat: chatCompletionsFormat,
  translatedOperation: 'chat.completions',
  upstreamApiFor: (options) => UPSTREAM_APIS[options.api ?? 'chat'] ?? (UPSTREAM_APIS.chat as UpstreamApi),
  // Whatever `api` says: it picks what translated messages take, and OpenAI counts for chat-completions models too. A
  // compatible server without the endpoint answers its own 404, which the client gets in its format.
  countingApi: { format: inputTokensFormat, operation: 'messages.countTokens' },
  otelProviderName: 'openai',
  rateLimits: openaiRateLimits,
  clientKey: (headers) => bearer(headers.authorization),
  // The default on shared paths: any client that does not say it is another format's.
  recognises: () => true,
  modelList: (models) => ({ object: 'list', data: models.map(modelObject) }),
  modelObject,
  errorBody: ({ status, code, message, param }) => ({
    error: { message, type: status >= 500 ? 'api_error' : 'invalid_request_error', param: param ?? null, code },
  }),
  // The id line opens the event, as the event-stream standard writes it; every OpenAI-format parser reads it there.
  numberedEvent: (event, id) => Buffer.concat([Buffer.from(`id: ${id}\n`), event]),
  usageField: 'usage',
  usage,
  streamUsage: newestUsage(usage),
  // A Responses object has no choices: its answers report no finish reason.
  finishReasonField: 'finish_reason',
  finishReasons(response, reasons) {
    if (typeof response === 'object' && response !== null) {
      choiceReasons((response as { choices?: unknown }).choices, 'finish_reason', reasons)
    }
  },
  upstreamBasePath: (pathname) => pathname.replace(/\/+$/, ''),
  // A base URL copied with the endpoint on it (`…/v1/chat/completions`): every call would go to `…/chat/completions/chat/completions`.
  intendedBasePath: (pathname) => /^(.*?)\/(?:chat\/completions|responses|embeddings)$/.exec(pathname.replace(/\/+$/, ''))?.[1],
  // OpenAI's API and most compatible ones live under `/v1`; a few proxies serve at the root, so this only warns.
  doubtfulBasePath: (pathname) => (pathname.replace(/\/+$/, '') === '' ? '/v1' : undefined),
  upstreamModelProblem: () => undefined,
  upstreamPath: (basePath, _upstreamModel, operation) => `${basePath}${UPSTREAM_PATHS[operation] ?? '/chat/completions'}`,
  upstreamAuthHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
}

export { chatCompletions, embeddings, responses } from './operations.js'
