import type { TokenCounts } from '../../types.js'
import type { Dialect, ListedModel, OperationFormat } from '../dialect.js'
import { bearer, tokenCount } from '../shared.js'
import { validateChat, validateResponses } from './validate.js'

/** Token counts of a `usage` object: chat completions say `prompt_tokens`, Responses say `input_tokens`. */
function counts(usage: unknown): TokenCounts | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined
  const fields = usage as Record<string, unknown>
  const input = tokenCount(fields.prompt_tokens ?? fields.input_tokens)
  const output = tokenCount(fields.completion_tokens ?? fields.output_tokens)
  return { input_tokens: input, output_tokens: output, total_tokens: input + output }
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

/** The OpenAI wire format: chat completions and Responses, Bearer keys, `{ error: { message, type, param, code } }`. */
export const openai: Dialect = {
  name: 'openai',
  otelProviderName: 'openai',
  clientKey: (headers) => bearer(headers.authorization),
  // The default on shared paths: any client that does not say it is another format's.
  recognises: () => true,
  modelList: (models) => ({ object: 'list', data: models.map(modelObject) }),
  modelObject,
  errorBody: ({ status, code, message, param }) => ({
    error: { message, type: status >= 500 ? 'api_error' : 'invalid_request_error', param: param ?? null, code },
  }),
  usageField: 'usage',
  usage,
  upstreamBasePath: (pathname) => pathname.replace(/\/+$/, ''),
  upstreamModelProblem: () => undefined,
  // A Responses call goes upstream as one only when the upstream speaks OpenAI too; every other operation that
  // reaches an OpenAI upstream was translated into chat completions.
  upstreamPath: (basePath, _model, operation) => `${basePath}${operation === 'responses' ? '/responses' : '/chat/completions'}`,
  upstreamAuthHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
}

/** `POST /v1/chat/completions`: the model and the stream flag are in the body. */
export const chatCompletions: OperationFormat = {
  operation: 'chat.completions',
  modelInBody: true,
  readFields: new Set([
    'model',
    'messages',
    'stream',
    'temperature',
    'top_p',
    'presence_penalty',
    'frequency_penalty',
    'n',
    'max_completion_tokens',
    'max_tokens',
  ]),
  read: (fields) => validateChat(fields),
}

/** `POST /v1/responses`: OpenAI's Responses API; the model and the stream flag are in the body. */
export const responses: OperationFormat = {
  operation: 'responses',
  modelInBody: true,
  readFields: new Set(['model', 'input', 'stream', 'temperature', 'top_p', 'max_output_tokens']),
  read: (fields) => validateResponses(fields),
}
