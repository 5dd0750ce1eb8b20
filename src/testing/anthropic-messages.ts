// Anthropic's Messages (`POST /v1/messages`): the message, whole or as its named server-sent events, with thinking
// blocks when thinking is on and a `tool_use` block when the request declares tools.

import type { ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { blocksText, fieldProblem, promptTokens, sendAnthropicError } from './anthropic.js'
import { type State, type StreamWriter, send, stream } from './respond.js'
import { imageNote, sampleOf, toolArguments, toolReply } from './schema.js'
import { chunkCount, controlledText, JSON_TYPE, type JsonObject, splitText, tokens } from './shared.js'

const SSE_TYPE = 'text/event-stream; charset=utf-8'

/**
 * The fields of a Messages request (`MessageCreateParams`, beta ones included, and the sampling parameters that
 * version 2023-06-01 still takes), and the mock's own `mock`: anything else is refused, as Anthropic does.
 */
const KNOWN_FIELDS = new Set([
  'max_tokens',
  'messages',
  'model',
  'billing_policy',
  'cache_control',
  'compaction',
  'container',
  'context_management',
  'diagnostics',
  'fallback_credit_token',
  'fallbacks',
  'inference_geo',
  'mcp_servers',
  'metadata',
  'output_config',
  'output_format',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'temperature',
  'thinking',
  'thread',
  'tool_choice',
  'tools',
  'top_k',
  'top_p',
  'user_profile_id',
  'workspace_id',
  'mock',
])

/** The smallest thinking budget Anthropic takes. */
const MIN_THINKING_BUDGET = 1024

/** What the model thinks, when thinking is on: the same words every time. */
const THOUGHT = 'The user wants an answer; the mock upstream gives its usual one.'

/** A Messages body with the fields every request needs. */
type MessagesRequest = JsonObject & { model: string; messages: unknown[]; max_tokens: number }

/** A declared tool the client runs itself: a name and the JSON schema of its input. */
type CustomTool = JsonObject & { name: string; input_schema: JsonObject }

/** What the model answers: text (cut at a stop sequence it met), or a call of one tool with its input. */
type MessagesAnswer = { text: string; stopSequence?: string } | { call: { name: string; input: JsonObject } }

const isMessagesRequest = (body: JsonObject): body is MessagesRequest =>
  typeof body.model === 'string' && Array.isArray(body.messages) && typeof body.max_tokens === 'number'

const isCustomTool = (t: unknown): t is CustomTool => isObject(t) && typeof t.name === 'string' && isObject(t.input_schema)

/** Anthropic's 400 message for what is wrong with a Messages body, or undefined. */
function messagesProblem(body: JsonObject, version: unknown): string | undefined {
  const problem = fieldProblem(body, KNOWN_FIELDS, version)
  if (problem !== undefined) return problem
  const max = body.max_tokens
  if (max === undefined) return 'max_tokens: Field required'
  if (typeof max !== 'number' || !Number.isSafeInteger(max)) return 'max_tokens: Input should be a valid integer'
  // 0 is allowed: a call that only warms the prompt cache generates nothing.
  if (max < 0) return 'max_tokens: Input should be greater than or equal to 0'
  const thinking = body.thinking
  if (isObject(thinking) && thinking.type === 'enabled') {
    const budget = thinking.budget_tokens
    if (typeof budget !== 'number' || !Number.isSafeInteger(budget)) return 'thinking.enabled.budget_tokens: Field required'
    if (budget < MIN_THINKING_BUDGET)
      return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`
    if (budget >= max) return '`max_tokens` must be greater than `thinking.budget_tokens`'
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return 'stream: Input should be a valid boolean'
  return undefined
}

/**
 * Answer a Messages request: 400 for a field Anthropic does not know or a missing `model`, `messages` or `max_tokens`
 * (or a thinking budget it refuses), else the message, whole or streamed. `version` is the `anthropic-version` sent;
 * `nextSeq` numbers ids uniquely per server and is called only for a reply.
 */
export function answerMessages(
  body: JsonObject,
  ctl: JsonObject,
  version: unknown,
  res: ServerResponse,
  st: State,
  nextSeq: () => number,
  writeStream: StreamWriter = stream,
): void {
  const problem = messagesProblem(body, version)
  if (problem !== undefined || !isMessagesRequest(body)) {
    sendAnthropicError(res, st, 400, problem ?? 'max_tokens: Input should be a valid integer')
    return
  }
  anthropicMessage(body, ctl, res, st, nextSeq(), writeStream)
}

/** Image blocks in a message content. */
const imageCount = (content: unknown): number =>
  Array.isArray(content) ? content.filter((b) => isObject(b) && b.type === 'image').length : 0

/** The text cut before the first stop sequence it contains, with that sequence; the text whole when none occurs. */
function cutAtStop(text: string, sequences: unknown): MessagesAnswer {
  let at = -1
  let found: string | undefined
  for (const s of Array.isArray(sequences) ? sequences : []) {
    if (typeof s !== 'string' || s === '') continue
    const i = text.indexOf(s)
    if (i !== -1 && (at === -1 || i < at)) {
      at = i
      found = s
    }
  }
  return found === undefined ? { text } : { text: text.slice(0, at), stopSequence: found }
}

/**
 * What the model answers: the text a control sets; `Tool said: …` when the last turn carries tool results; a call to
 * the tool `tool_choice` names, else the first declared, when the user spoke last (unless the choice is `none`); JSON
 * built from the schema of a `json_schema` output format; else the echo of the last user message, with the images it
 * carried counted. Text stops before the first of the request's stop sequences.
 */
function answerOf(body: MessagesRequest, ctl: JsonObject, lastUser: string, images: number): MessagesAnswer {
  const controlled = controlledText(ctl)
  if (controlled !== undefined) return cutAtStop(controlled, body.stop_sequences)
  const last = body.messages.filter(isObject).at(-1)
  const results =
    last?.role === 'user' && Array.isArray(last.content) ? last.content.filter((b) => isObject(b) && b.type === 'tool_result') : []
  if (results.length > 0) return cutAtStop(toolReply(results.map((r) => blocksText(r.content))), body.stop_sequences)
  const choice = isObject(body.tool_choice) ? body.tool_choice : {}
  const tools = Array.isArray(body.tools) ? body.tools.filter(isCustomTool) : []
  const wanted = ctl.tool_name ?? (choice.type === 'tool' ? choice.name : undefined)
  const tool = tools.find((t) => t.name === wanted) ?? tools[0]
  if (tool !== undefined && last?.role === 'user' && choice.type !== 'none') {
    return { call: { name: tool.name, input: toolArguments(ctl, tool.input_schema) } }
  }
  const config = isObject(body.output_config) ? body.output_config : {}
  const format = config.format ?? body.output_format
  if (isObject(format) && format.type === 'json_schema') return { text: JSON.stringify(sampleOf(format.schema)) }
  return cutAtStop(`Echo: ${lastUser}${imageNote(images)}`, body.stop_sequences)
}

/** True when the request turns thinking on, with a budget or adaptive. */
const thinks = (body: JsonObject): boolean =>
  isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive')

/** A content block as its `content_block_start` event carries it: empty, to be filled by the deltas. */
function emptyBlock(block: JsonObject): JsonObject {
  if (block.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' }
  if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: {} }
  return { type: 'text', text: '' }
}

/** The deltas that fill a block: the thought then its signature, the input's JSON text in pieces, or the text in pieces. */
function deltasOf(block: JsonObject, ctl: JsonObject): JsonObject[] {
  if (block.type === 'thinking') {
    return [
      { type: 'thinking_delta', thinking: block.thinking },
      { type: 'signature_delta', signature: block.signature },
    ]
  }
  if (block.type === 'tool_use') {
    return splitText(JSON.stringify(block.input), Math.max(1, chunkCount(ctl))).map((p) => ({ type: 'input_json_delta', partial_json: p }))
  }
  return splitText(String(block.text), chunkCount(ctl)).map((p) => ({ type: 'text_delta', text: p }))
}

/** One server-sent event: the Anthropic SDK reads only events with an `event:` line naming the payload's type. */
const sseEvent = (data: JsonObject): string => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`

function anthropicMessage(
  body: MessagesRequest,
  ctl: JsonObject,
  res: ServerResponse,
  st: State,
  seq: number,
  writeStream: StreamWriter,
): void {
  const id = `msg_mock_${seq}`
  const model = body.model
  let lastUser = ''
  let images = 0
  for (const m of body.messages) {
    if (!isObject(m) || m.role !== 'user') continue
    lastUser = blocksText(m.content)
    images = imageCount(m.content)
  }
  const answer = answerOf(body, ctl, lastUser, images)
  const content: JsonObject[] = []
  let generated = 0
  if (thinks(body)) {
    // A signature is opaque to clients; they send it back with the thinking block in the next turn.
    const signature =
      typeof ctl.thought_signature === 'string' ? ctl.thought_signature : Buffer.from(`mock-signature-${seq}`).toString('base64')
    content.push({ type: 'thinking', thinking: THOUGHT, signature })
    generated += THOUGHT.length
  }
  if ('call' in answer) {
    content.push({ type: 'tool_use', id: `toolu_mock_${seq}`, name: answer.call.name, input: answer.call.input })
    generated += answer.call.name.length + JSON.stringify(answer.call.input).length
  } else {
    content.push({ type: 'text', text: answer.text })
    generated += answer.text.length
  }
  let stopSequence = 'stopSequence' in answer && answer.stopSequence !== undefined ? answer.stopSequence : null
  let stopReason = 'call' in answer ? 'tool_use' : stopSequence !== null ? 'stop_sequence' : 'end_turn'
  if (body.max_tokens === 0) {
    // A prompt-cache warm-up: the prompt is read, nothing is generated.
    content.length = 0
    generated = 0
    stopSequence = null
    stopReason = 'max_tokens'
  }
  const usage: JsonObject = {
    input_tokens: promptTokens(body),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: tokens(generated),
    service_tier: 'standard',
  }
  if (isObject(ctl.usage)) Object.assign(usage, ctl.usage)

  const message = { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: stopSequence, usage }
  if (body.stream !== true) {
    send(res, st, 200, JSON_TYPE, JSON.stringify(message))
    return
  }

  // `message_start` carries the input counts and a first output token; `message_delta` the cumulative counts at the end.
  const frames = [
    sseEvent({
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    }),
  ]
  content.forEach((block, index) => {
    frames.push(sseEvent({ type: 'content_block_start', index, content_block: emptyBlock(block) }))
    if (index === 0) frames.push(sseEvent({ type: 'ping' }))
    for (const delta of deltasOf(block, ctl)) frames.push(sseEvent({ type: 'content_block_delta', index, delta }))
    frames.push(sseEvent({ type: 'content_block_stop', index }))
  })
  const { cache_creation: _split, service_tier: _tier, ...cumulative } = usage
  frames.push(sseEvent({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: cumulative }))
  frames.push(sseEvent({ type: 'message_stop' }))
  writeStream(res, st, SSE_TYPE, frames, ctl)
}
