// The subset of Anthropic's Messages wire format this module reads and writes.
import { field, hintField, optionalField, type PayloadType, payload } from '../../../translate/payload.js'
import { array, boolean, integer, numberFrom, object, refuse, string, strings, unchecked } from '../../../translate/readers.js'

/** `system`: text, or a list of text blocks. */
const systemPrompt = (value: unknown, path: string): string | unknown[] => (typeof value === 'string' ? value : array(value, path))

/** `thinking`: `enabled` with a budget, `adaptive` (the model decides), or `disabled`. */
export const messagesThinking = payload({
  type: field(string),
  budget_tokens: optionalField(integer),
  /** Whether the thinking text is shown or only signed: how the answer looks, not what the model thinks. */
  display: hintField(),
})

/** `output_config`: the effort the model spends, and the JSON schema its answer follows. */
export const messagesOutputConfig = payload({ effort: optionalField(string), format: optionalField(object) })

/** `tool_choice`. */
export const messagesToolChoice = payload({
  type: field(string),
  name: optionalField(string),
  disable_parallel_tool_use: optionalField(boolean),
})

/** `max_tokens`, required: 0 is allowed, as the API allows it (a call that only warms the prompt cache generates nothing). */
function maxTokens(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    refuse(path, `'${path}' is required and must be an integer of at least 0.`)
  }
  return value
}

/**
 * A Messages request body: every member translation accepts (any other is refused by name), those the gateway reads
 * before any translation, and those that only hint the provider (dropped and named). Members read deeper
 * (`messages`, `system`, `tools`) are read member by member.
 */
export const messagesRequest = payload({
  model: field(string, { gatewayReads: true }),
  messages: field(array, { gatewayReads: true }),
  max_tokens: field(maxTokens, { gatewayReads: true }),
  stream: optionalField(boolean, { gatewayReads: true }),
  system: optionalField(systemPrompt),
  tools: optionalField(array),
  tool_choice: optionalField(messagesToolChoice.object),
  temperature: optionalField(numberFrom(0, 1), { gatewayReads: true }),
  top_p: optionalField(numberFrom(0, 1), { gatewayReads: true }),
  top_k: optionalField(integer),
  stop_sequences: optionalField(strings),
  thinking: optionalField(messagesThinking.object),
  output_config: optionalField(messagesOutputConfig.object),
  metadata: hintField(),
  context_management: hintField(),
  cache_control: hintField(),
  service_tier: hintField(),
  inference_geo: hintField(),
})

/** A Messages request body, as `messagesRequest` reads it. */
export type MessagesRequest = PayloadType<typeof messagesRequest>

/** A text block: of a message, or of `system`. */
export const messagesTextBlock = payload({
  type: field(string),
  text: field(string),
  cache_control: hintField(),
  /** Where an earlier answer's text came from: what the model reads is the text. */
  citations: optionalField(unchecked),
})

/** Where an image's or a document's bytes are: inline (base64), or at a URL. */
export type MessagesSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string }

/** A prompt-cache breakpoint: the prefix up to the block it is on is cached, for `ttl` where said. */
export interface MessagesCacheControl {
  type: 'ephemeral'
  ttl?: '5m' | '1h'
}

/** A content block of a request's message. */
export type MessagesBlockParam = (
  | { type: 'text'; text: string }
  | { type: 'image'; source: MessagesSource }
  | { type: 'document'; source: MessagesSource; title?: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
) & { cache_control?: MessagesCacheControl }

/** A message of a request; `system` is an instruction given mid-conversation. */
export interface MessagesMessageParam {
  role: 'user' | 'assistant' | 'system'
  content: string | MessagesBlockParam[]
}

/** A client tool. */
export interface MessagesTool {
  name: string
  description?: string
  input_schema: Record<string, unknown>
  strict?: boolean
  cache_control?: MessagesCacheControl
}

/** `tool_choice`, as written. */
export type MessagesToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' }

/**
 * A content block of an answer. A tool call the gateway writes is the model's own (`caller: direct`, which the
 * Anthropic SDK's types require). A text block it writes has no `citations`, though those types require the member
 * (nullable): `@ai-sdk/anthropic` 3 refuses a message whose text block says `citations: null` (an array or nothing).
 */
export type MessagesContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; caller: { type: 'direct' } }

/** Why an answer stopped. */
export type MessagesStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'

/** Server tool calls of an answer: none for an answer the gateway writes. */
export interface MessagesServerToolUsage {
  web_fetch_requests: number
  web_search_requests: number
}

/**
 * Token usage: `input_tokens` counts the prompt tokens neither read from nor written to the cache. Every member is
 * required (the Anthropic SDK's `Usage`): what the gateway does not know is `null`, as the API sends it.
 */
export interface MessagesUsage {
  input_tokens: number
  /** Null where the upstream said nothing of the cache. */
  cache_creation_input_tokens: number | null
  cache_read_input_tokens: number | null
  /** The cache writes by time to live: no other format tells them apart. */
  cache_creation: { ephemeral_1h_input_tokens: number; ephemeral_5m_input_tokens: number } | null
  output_tokens: number
  output_tokens_details: { thinking_tokens: number } | null
  server_tool_use: MessagesServerToolUsage | null
  service_tier: 'standard' | 'priority' | 'batch' | null
  inference_geo: string | null
  speed: 'standard' | 'fast' | null
}

/** The usage of a `message_delta` event: cumulative counts (the Anthropic SDK's `MessageDeltaUsage`). */
export interface MessagesDeltaUsage {
  input_tokens: number | null
  cache_creation_input_tokens: number | null
  cache_read_input_tokens: number | null
  output_tokens: number
  output_tokens_details: { thinking_tokens: number } | null
  server_tool_use: MessagesServerToolUsage | null
}

/** Why a refusal stopped an answer; the gateway knows neither the category nor an explanation. */
export interface MessagesStopDetails {
  type: 'refusal'
  category: string | null
  explanation: string | null
}

/** A message (`type: 'message'`): a whole answer, or the one `message_start` opens. */
export interface MessagesMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: MessagesContentBlock[]
  /** The code execution container of the answer: none the gateway knows of. */
  container: null
  /** Why the prompt cache missed: not told by other formats. */
  diagnostics: null
  stop_reason: MessagesStopReason | null
  stop_details: MessagesStopDetails | null
  stop_sequence: string | null
  usage: MessagesUsage
}

/** An Anthropic error body (`error.type` names the kind, e.g. `rate_limit_error`). */
export interface MessagesErrorBody {
  type: 'error'
  error: { type: string; message: string }
  /** The request's id, as its `request-id` header says it; null where none is known. */
  request_id: string | null
}

/** The delta of a content block. */
export type MessagesDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }

/** One streamed event; its `type` is also its SSE `event:` name. */
export type MessagesStreamEvent =
  | { type: 'message_start'; message: MessagesMessage }
  | { type: 'content_block_start'; index: number; content_block: MessagesContentBlock }
  | { type: 'content_block_delta'; index: number; delta: MessagesDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta'
      delta: {
        container: null
        stop_reason: MessagesStopReason | null
        stop_details: MessagesStopDetails | null
        stop_sequence: string | null
      }
      usage: MessagesDeltaUsage
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | MessagesErrorBody
