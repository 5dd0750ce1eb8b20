// OpenAI's Responses wire format (`POST /v1/responses`): the response object, whole or as typed, numbered events.

import type { ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { sendOpenaiError } from './openai.js'
import { type State, send, stream } from './respond.js'
import { imageNote, sampleOf, toolArguments, toolReply } from './schema.js'
import { chunkCount, controlledText, JSON_TYPE, type JsonObject, num, splitText, tokens } from './shared.js'

const SSE_TYPE = 'text/event-stream; charset=utf-8'

/** The documented Responses request fields, and the mock's own `mock`: anything else is refused, as OpenAI does. */
const KNOWN_FIELDS = new Set([
  'background',
  'context_management',
  'conversation',
  // Codex CLI sends it on every call to a Responses API, OpenAI's own included.
  'client_metadata',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
  'mock',
])

/** A Responses body with the field every request needs. */
type ResponsesRequest = JsonObject & { model: string }

const isResponsesRequest = (body: JsonObject): body is ResponsesRequest => typeof body.model === 'string'

/** What the model answers: text, or a call of one function with its arguments' JSON text. */
type ResponsesAnswer = { content: string } | { call: { name: string; arguments: string } }

/** Text of a message content: a string, or its `input_text`/`output_text` parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let s = ''
  for (const p of content) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/** Text of a function output: a string, or its text parts. */
const outputText = (output: unknown): string => contentText(output)

/** The input as items: a string is one user message. */
function itemsOf(body: JsonObject): JsonObject[] {
  if (typeof body.input === 'string') return [{ role: 'user', content: body.input }]
  return Array.isArray(body.input) ? body.input.filter(isObject) : []
}

/** A message item (its `type` may be left out). */
const isMessage = (item: JsonObject): boolean => item.type === 'message' || (item.type === undefined && typeof item.role === 'string')

/** A declared function tool. */
const isFunctionTool = (t: unknown): t is JsonObject => isObject(t) && t.type === 'function'

/**
 * What the model answers: the text a control sets; `Tool said: …` after function outputs; a call to the function
 * `tool_choice` names, else the first declared, when the user spoke last; JSON built from a `json_schema` text
 * format; else the echo of the last user message, with the images it carried counted.
 */
function answerOf(body: JsonObject, ctl: JsonObject, items: JsonObject[]): ResponsesAnswer {
  const controlled = controlledText(ctl)
  if (controlled !== undefined) return { content: controlled }
  // Instructions (a system or developer message, which agents also send mid-conversation) are not a turn.
  items = items.filter((item) => !isMessage(item) || (item.role !== 'system' && item.role !== 'developer'))
  const last = items.at(-1)
  if (last?.type === 'function_call_output') {
    let first = items.length - 1
    while (first > 0 && items[first - 1]?.type === 'function_call_output') first--
    return { content: toolReply(items.slice(first).map((item) => outputText(item.output))) }
  }
  const users = items.filter((item) => isMessage(item) && item.role === 'user')
  const lastUser = users.at(-1)
  const named = isObject(body.tool_choice) && body.tool_choice.type === 'function' ? body.tool_choice.name : undefined
  const tools = Array.isArray(body.tools) ? body.tools.filter(isFunctionTool) : []
  const fn = tools.find((t) => t.name === (ctl.tool_name ?? named)) ?? tools[0]
  if (fn !== undefined && last !== undefined && last === lastUser && body.tool_choice !== 'none') {
    const name = typeof fn.name === 'string' ? fn.name : 'function'
    return { call: { name, arguments: JSON.stringify(toolArguments(ctl, fn.parameters)) } }
  }
  const text = contentText(lastUser?.content)
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined
  if (format?.type === 'json_schema') return { content: JSON.stringify(sampleOf(format.schema)) }
  if (format?.type === 'json_object') return { content: JSON.stringify({ echo: text }) }
  const content = lastUser?.content
  const images = Array.isArray(content) ? content.filter((p) => isObject(p) && p.type === 'input_image').length : 0
  return { content: `Echo: ${text}${imageNote(images)}` }
}

/**
 * Answer a Responses request: 400 for a field OpenAI does not know or without `model`, else the response, whole or
 * as its event stream. `nextSeq` numbers ids uniquely per server; it is called only for a reply.
 */
export function answerResponses(body: JsonObject, ctl: JsonObject, res: ServerResponse, st: State, nextSeq: () => number): void {
  if (refusedUnknown(body, KNOWN_FIELDS, res, st)) return
  if (!isResponsesRequest(body)) {
    sendOpenaiError(res, st, 400, "Missing required parameter: 'model'.")
    return
  }
  if (body.input !== undefined && typeof body.input !== 'string' && !Array.isArray(body.input)) {
    sendOpenaiError(res, st, 400, "Invalid type for 'input': expected a string or an array of input items.")
    return
  }
  respond(body, ctl, res, st, nextSeq())
}

/** Answers OpenAI's 400 for the first field not in `known`, as OpenAI does; true when it did. */
function refusedUnknown(body: JsonObject, known: ReadonlySet<string>, res: ServerResponse, st: State): boolean {
  const unknown = Object.keys(body).find((k) => !known.has(k))
  if (unknown === undefined) return false
  const error = { message: `Unknown parameter: '${unknown}'.`, type: 'invalid_request_error', param: unknown, code: 'unknown_parameter' }
  send(res, st, 400, JSON_TYPE, JSON.stringify({ error }))
  return true
}

/** The fields `POST /v1/responses/input_tokens` takes (and the mock's own `mock`): anything else is refused. */
const COUNT_FIELDS = new Set([
  'conversation',
  'input',
  'instructions',
  'model',
  'parallel_tool_calls',
  'previous_response_id',
  'reasoning',
  'text',
  'tool_choice',
  'tools',
  'truncation',
  'mock',
])

/**
 * `POST /v1/responses/input_tokens`: a token per four characters of the instructions, the input's text and the tools'
 * JSON, so a test can tell what was counted.
 */
export function answerInputTokens(body: JsonObject, res: ServerResponse, st: State): void {
  if (refusedUnknown(body, COUNT_FIELDS, res, st)) return
  let counted = typeof body.instructions === 'string' ? body.instructions.length : 0
  for (const item of itemsOf(body)) counted += contentText(isMessage(item) ? item.content : item.output).length
  if (Array.isArray(body.tools)) counted += JSON.stringify(body.tools).length
  send(res, st, 200, JSON_TYPE, JSON.stringify({ object: 'response.input_tokens', input_tokens: tokens(counted) }))
}

/** The response object with everything but its status, output and usage, as OpenAI echoes the request. */
function skeleton(body: ResponsesRequest, seq: number) {
  return {
    id: `resp_mock_${seq}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    background: body.background === true,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: num(body.max_output_tokens) ?? null,
    max_tool_calls: null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls !== false,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    prompt_cache_key: null,
    reasoning: { effort: isObject(body.reasoning) ? (body.reasoning.effort ?? null) : null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store !== false,
    temperature: num(body.temperature) ?? 1,
    text: { format: isObject(body.text) && isObject(body.text.format) ? body.text.format : { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_logprobs: 0,
    top_p: num(body.top_p) ?? 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: isObject(body.metadata) ? body.metadata : {},
  }
}

function respond(body: ResponsesRequest, ctl: JsonObject, res: ServerResponse, st: State, seq: number): void {
  const items = itemsOf(body)
  let promptLen = typeof body.instructions === 'string' ? body.instructions.length : 0
  for (const item of items) promptLen += contentText(isMessage(item) ? item.content : item.output).length
  const answer = answerOf(body, ctl, items)
  const input = tokens(promptLen)
  const output = tokens('call' in answer ? answer.call.name.length + answer.call.arguments.length : answer.content.length)
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  }
  if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)
  const item =
    'call' in answer
      ? {
          id: `fc_mock_${seq}`,
          type: 'function_call',
          status: 'completed',
          arguments: answer.call.arguments,
          call_id: `call_mock_${seq}`,
          name: answer.call.name,
        }
      : { id: `msg_mock_${seq}`, type: 'message', status: 'completed', content: [textPart(answer.content)], role: 'assistant' }
  const response = skeleton(body, seq)
  const thought = summaryItem(body, seq)
  const outputItems = thought ? [thought, item] : [item]
  if (body.stream !== true) {
    send(res, st, 200, JSON_TYPE, JSON.stringify({ ...response, status: 'completed', output: outputItems, usage }))
    return
  }
  let sequence = 0
  const event = (type: string, fields: JsonObject): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`
  const frames = [event('response.created', { response }), event('response.in_progress', { response })]
  if (thought) {
    const at = { item_id: thought.id, output_index: 0, summary_index: 0 }
    frames.push(event('response.output_item.added', { output_index: 0, item: { ...thought, summary: [] } }))
    frames.push(event('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } }))
    for (const delta of splitText(SUMMARY, 2)) frames.push(event('response.reasoning_summary_text.delta', { ...at, delta }))
    frames.push(event('response.reasoning_summary_text.done', { ...at, text: SUMMARY }))
    frames.push(event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: SUMMARY } }))
    frames.push(event('response.output_item.done', { output_index: 0, item: thought }))
  }
  const index = outputItems.length - 1
  const where = { item_id: item.id, output_index: index }
  if ('call' in answer) {
    frames.push(event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }))
    for (const delta of splitText(answer.call.arguments, Math.max(1, chunkCount(ctl)))) {
      frames.push(event('response.function_call_arguments.delta', { ...where, delta }))
    }
    frames.push(event('response.function_call_arguments.done', { ...where, arguments: answer.call.arguments }))
  } else {
    frames.push(event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }))
    const part = { ...where, content_index: 0 }
    frames.push(event('response.content_part.added', { ...part, part: textPart('') }))
    for (const delta of splitText(answer.content, chunkCount(ctl)))
      frames.push(event('response.output_text.delta', { ...part, delta, logprobs: [] }))
    frames.push(event('response.output_text.done', { ...part, text: answer.content, logprobs: [] }))
    frames.push(event('response.content_part.done', { ...part, part: textPart(answer.content) }))
  }
  frames.push(event('response.output_item.done', { output_index: index, item }))
  frames.push(event('response.completed', { response: { ...response, status: 'completed', output: outputItems, usage } }))
  stream(res, st, SSE_TYPE, frames, ctl)
}

/** The reasoning summary the mock's model gives when a request asks for one. */
export const SUMMARY = '**Answering as asked**\n\nThe user wants an answer; the mock upstream gives its usual one.'

/**
 * The reasoning item of an answer whose request asked for a summary (`reasoning.summary`), its encrypted content
 * when the request includes it, as OpenAI's reasoning models answer; undefined when none was asked.
 */
function summaryItem(body: ResponsesRequest, seq: number) {
  const summary = isObject(body.reasoning) ? body.reasoning.summary : undefined
  if (summary !== 'auto' && summary !== 'concise' && summary !== 'detailed') return undefined
  const encrypted = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content')
  return {
    id: `rs_mock_${seq}`,
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: SUMMARY }],
    ...(encrypted ? { encrypted_content: Buffer.from(`mock-encrypted-${seq}`).toString('base64') } : {}),
  }
}

/** An `output_text` content part. */
const textPart = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text })
