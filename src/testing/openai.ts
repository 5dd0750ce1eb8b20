// The OpenAI chat-completions wire format: model list, error bodies, replies and their SSE stream.

import type { ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { type State, send, stream } from './respond.js'
import { imageNote, sampleOf, toolArguments, toolReply } from './schema.js'
import {
  chunkCount,
  controlledText,
  DEFAULT_DIMENSIONS,
  embeddingOf,
  JSON_TYPE,
  type JsonObject,
  num,
  splitText,
  tokens,
} from './shared.js'

const SSE_TYPE_OPENAI = 'text/event-stream; charset=utf-8'

/** Body of `GET /v1/models`, serialised once. */
export const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
    { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
    { id: 'gpt-4.1-mini', object: 'model', created: 1744318173, owned_by: 'system' },
  ],
})

/** Body OpenAI answers a missing or wrong key with. */
export const OPENAI_AUTH_ERROR = JSON.stringify({
  error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
})

function openaiErrorType(status: number): string {
  if (status === 401) return 'invalid_request_error'
  if (status === 429) return 'rate_limit_exceeded'
  if (status >= 500) return 'server_error'
  return 'invalid_request_error'
}

function openaiError(status: number, message: string, code: string | null = null) {
  return { error: { message, type: openaiErrorType(status), param: null, code } }
}

/** Body OpenAI answers a request body that is not a JSON object with. */
export const OPENAI_BAD_JSON = JSON.stringify(
  openaiError(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
  ),
)

/** Answer an error in OpenAI's shape. */
export function sendOpenaiError(res: ServerResponse, st: State, status: number, message: string, code: string | null = null): void {
  send(res, st, status, JSON_TYPE, JSON.stringify(openaiError(status, message, code)))
}

/** The documented chat-completions request fields, and the mock's own `mock`: anything else is refused, as OpenAI does. */
const KNOWN_FIELDS = new Set([
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
  'mock',
])

/** A chat-completions body with the two fields every request needs. */
type ChatRequest = JsonObject & { model: string; messages: unknown[] }

/** A declared tool with a function definition. */
type FunctionTool = JsonObject & { function: JsonObject }

/** What the model answers: text, or a call of one function with its arguments' JSON text. */
type ChatAnswer = { content: string } | { call: { name: string; arguments: string } }

const isChatRequest = (body: JsonObject): body is ChatRequest => typeof body.model === 'string' && Array.isArray(body.messages)

const isFunctionTool = (t: unknown): t is FunctionTool => isObject(t) && isObject(t.function)

/** OpenAI's message for unknown top-level fields, or undefined when there are none. */
function unrecognized(body: JsonObject): string | undefined {
  const unknown = Object.keys(body).filter((k) => !KNOWN_FIELDS.has(k))
  if (unknown.length === 0) return undefined
  return unknown.length === 1
    ? `Unrecognized request argument supplied: ${unknown[0]}`
    : `Unrecognized request arguments supplied: ${unknown.join(', ')}`
}

/** Text of an OpenAI message content (string or array of parts). */
function openaiText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let s = ''
  for (const p of content) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/**
 * Answer a chat-completions request: 400 for a field OpenAI does not know or without `model` or `messages`, else the
 * completion, whole or streamed. `nextSeq` numbers ids uniquely per server; it is called only for a reply.
 */
export function answerChat(body: JsonObject, ctl: JsonObject, res: ServerResponse, st: State, nextSeq: () => number): void {
  const refused = unrecognized(body)
  if (refused !== undefined) {
    sendOpenaiError(res, st, 400, refused)
    return
  }
  if (!isChatRequest(body)) {
    const msg = typeof body.model !== 'string' ? 'you must provide a model parameter' : "Missing required parameter: 'messages'."
    sendOpenaiError(res, st, 400, msg)
    return
  }
  openaiCompletion(body, ctl, res, st, nextSeq())
}

/** Number of image parts in a message content. */
function imageCount(content: unknown): number {
  return Array.isArray(content) ? content.filter((p) => isObject(p) && p.type === 'image_url').length : 0
}

/**
 * What the model answers: the text a control sets; a call to the function `tool_choice` names, else the first
 * declared, when the user spoke last; `Tool said: …` after tool results; JSON built from a `json_schema` response
 * format; else the echo of the last user message, with the images it carried counted.
 */
function answerOf(body: ChatRequest, ctl: JsonObject, lastUser: string, images: number): ChatAnswer {
  const controlled = controlledText(ctl)
  if (controlled !== undefined) return { content: controlled }
  // Instructions (a system or developer message, which agents also send mid-conversation) are not a turn.
  const messages = body.messages.filter(isObject).filter((m) => m.role !== 'system' && m.role !== 'developer')
  const last = messages.at(-1)
  if (last?.role === 'tool') {
    let first = messages.length - 1
    while (first > 0 && messages[first - 1]?.role === 'tool') first--
    return { content: toolReply(messages.slice(first).map((m) => openaiText(m.content))) }
  }
  // The function `tool_choice` names, else the first declared.
  const named = isObject(body.tool_choice) && isObject(body.tool_choice.function) ? body.tool_choice.function.name : undefined
  const tools = Array.isArray(body.tools) ? body.tools.filter(isFunctionTool) : []
  const fn = tools.find((t) => t.function.name === (ctl.tool_name ?? named)) ?? tools[0]
  if (fn !== undefined && last?.role === 'user' && body.tool_choice !== 'none') {
    const name = typeof fn.function.name === 'string' ? fn.function.name : 'function'
    return { call: { name, arguments: JSON.stringify(toolArguments(ctl, fn.function.parameters)) } }
  }
  const format = body.response_format
  if (isObject(format) && format.type === 'json_schema' && isObject(format.json_schema)) {
    return { content: JSON.stringify(sampleOf(format.json_schema.schema)) }
  }
  if (isObject(format) && format.type === 'json_object') return { content: JSON.stringify({ echo: lastUser }) }
  return { content: `Echo: ${lastUser}${imageNote(images)}` }
}

function openaiCompletion(body: ChatRequest, ctl: JsonObject, res: ServerResponse, st: State, seq: number): void {
  const id = `chatcmpl-mock-${seq}`
  const created = Math.floor(Date.now() / 1000)
  const model = body.model
  const n = Math.max(1, Math.min(128, Math.floor(num(body.n) ?? 1)))
  let promptLen = 0
  let lastUser = ''
  let images = 0
  for (const m of body.messages) {
    if (!isObject(m)) continue
    const t = openaiText(m.content)
    promptLen += t.length
    if (m.role === 'user') {
      lastUser = t
      images = imageCount(m.content)
    }
  }
  const answer = answerOf(body, ctl, lastUser, images)
  const call = 'call' in answer ? { id: `call_mock_${seq}`, type: 'function', function: answer.call } : undefined
  const content = 'content' in answer ? answer.content : ''
  const finish = call ? 'tool_calls' : 'stop'
  const prompt = tokens(promptLen)
  const completion = tokens(call ? call.function.name.length + call.function.arguments.length : content.length) * n
  const usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
  if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)

  if (body.stream !== true) {
    const message = call
      ? { role: 'assistant', content: null, tool_calls: [call], refusal: null, annotations: [] }
      : { role: 'assistant', content, refusal: null, annotations: [] }
    const choices: JsonObject[] = []
    for (let i = 0; i < n; i++) choices.push({ index: i, message, logprobs: null, finish_reason: finish })
    const out = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices,
      usage,
      service_tier: 'default',
      system_fingerprint: null,
    }
    send(res, st, 200, JSON_TYPE, JSON.stringify(out))
    return
  }

  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true
  const frame = (choices: unknown[], u?: unknown): string => {
    const c: JsonObject = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: null,
      choices,
    }
    if (includeUsage) c.usage = u ?? null
    return `data: ${JSON.stringify(c)}\n\n`
  }
  const step = (i: number, delta: JsonObject, reason: string | null = null) =>
    frame([{ index: i, delta, logprobs: null, finish_reason: reason }])
  const frames: string[] = []
  if (call) {
    // A tool call streams like OpenAI's: its id and name first, then the arguments' JSON text in pieces.
    const head = { index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }
    for (let i = 0; i < n; i++) frames.push(step(i, { role: 'assistant', content: null, tool_calls: [head], refusal: null }))
    for (const p of splitText(call.function.arguments, Math.max(1, chunkCount(ctl)))) {
      for (let i = 0; i < n; i++) frames.push(step(i, { tool_calls: [{ index: 0, function: { arguments: p } }] }))
    }
  } else {
    for (let i = 0; i < n; i++) frames.push(step(i, { role: 'assistant', content: '', refusal: null }))
    for (const p of splitText(content, chunkCount(ctl))) {
      for (let i = 0; i < n; i++) frames.push(step(i, { content: p }))
    }
  }
  for (let i = 0; i < n; i++) frames.push(step(i, {}, finish))
  if (includeUsage) frames.push(frame([], usage))
  frames.push('data: [DONE]\n\n')
  stream(res, st, SSE_TYPE_OPENAI, frames, ctl)
}

/** The documented embeddings request fields, and the mock's own `mock`. */
const EMBEDDING_FIELDS = new Set(['input', 'model', 'encoding_format', 'dimensions', 'user', 'mock'])

const isTokenArray = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0)

/**
 * The inputs of an embeddings request (a string, strings, a token array or token arrays), each as a text to embed
 * and its token count; undefined when `input` has none of those shapes (OpenAI's 400).
 */
function embeddingInputs(input: unknown): { text: string; tokens: number }[] | undefined {
  if (typeof input === 'string') return input === '' ? undefined : [{ text: input, tokens: tokens(input.length) }]
  if (!Array.isArray(input) || input.length === 0) return undefined
  if (isTokenArray(input)) return [{ text: input.join(','), tokens: input.length }]
  if (input.every((s): s is string => typeof s === 'string' && s !== '')) return input.map((s) => ({ text: s, tokens: tokens(s.length) }))
  if (input.every(isTokenArray)) return input.map((a) => ({ text: a.join(','), tokens: a.length }))
  return undefined
}

/** A vector as OpenAI encodes it: numbers, or the little-endian float32 bytes in base64. */
function encoded(v: number[], encoding: string): number[] | string {
  return encoding === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v
}

/**
 * Answer an embeddings request: 400 for a field OpenAI does not know, without `model`, or with an `input`,
 * `encoding_format` or `dimensions` it refuses; else one deterministic vector per input, with usage.
 */
export function answerEmbeddings(body: JsonObject, ctl: JsonObject, res: ServerResponse, st: State): void {
  const unknown = Object.keys(body).filter((k) => !EMBEDDING_FIELDS.has(k))
  if (unknown.length > 0) {
    sendOpenaiError(res, st, 400, `Unrecognized request argument supplied: ${unknown.join(', ')}`)
    return
  }
  if (typeof body.model !== 'string') {
    sendOpenaiError(res, st, 400, 'you must provide a model parameter')
    return
  }
  const inputs = embeddingInputs(body.input)
  if (inputs === undefined) {
    sendOpenaiError(res, st, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.")
    return
  }
  const encoding = body.encoding_format ?? 'float'
  if (encoding !== 'float' && encoding !== 'base64') {
    sendOpenaiError(res, st, 400, `Invalid value for 'encoding_format': '${encoding}'. Supported values are: 'float' and 'base64'.`)
    return
  }
  const dimensions = body.dimensions
  if (dimensions !== undefined && !(typeof dimensions === 'number' && Number.isInteger(dimensions) && dimensions >= 1)) {
    sendOpenaiError(res, st, 400, "Invalid value for 'dimensions': it must be an integer of at least 1.")
    return
  }
  const dims = dimensions ?? DEFAULT_DIMENSIONS
  const data = inputs.map((input, index) => ({ object: 'embedding', index, embedding: encoded(embeddingOf(input.text, dims), encoding) }))
  const prompt = inputs.reduce((sum, input) => sum + input.tokens, 0)
  const usage = { prompt_tokens: prompt, total_tokens: prompt }
  if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)
  send(res, st, 200, JSON_TYPE, JSON.stringify({ object: 'list', data, model: body.model, usage }))
}
