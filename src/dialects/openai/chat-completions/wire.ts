// The subset of the chat-completions wire format this module reads and writes.
import { field, hintField, optionalField, type PayloadType, payload } from '../../../translate/payload.js'
import { array, boolean, integer, integerFrom, numberFrom, object, string, strings, unchecked } from '../../../translate/readers.js'

/** A content part of a chat message. */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'refusal'; refusal: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: { file_data?: string; filename?: string } }

/** A tool call of an assistant message; `extra_content` is where Google's compatibility API keeps thought signatures. */
export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
  extra_content?: { google: { thought_signature: string } }
}

/** A message of a chat request. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ChatContentPart[] }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | ChatContentPart[] | null; tool_calls?: ChatToolCall[]; refusal?: string | null }
  | { role: 'tool'; tool_call_id: string; content: string | ChatContentPart[] }

/** A function tool. */
export interface ChatTool {
  type: 'function'
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean }
}

/** `tool_choice`. */
export type ChatToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: { type: 'function'; function: { name: string } }[] } }

/** `response_format`. */
export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean } }

/** `stop`: one sequence, or a list of them. */
const stopSequences = (value: unknown, path: string): string | string[] => (typeof value === 'string' ? value : strings(value, path))

/** `stream_options`. */
export const chatStreamOptions = payload({ include_usage: optionalField(boolean) })

/**
 * A chat-completions request body: every member translation accepts (any other is refused by name), and those the
 * gateway reads before any translation. Members read deeper (`messages`, `tools`, …) are read member by member.
 */
export const chatRequest = payload({
  model: field(string, { gatewayReads: true }),
  messages: field(array, { gatewayReads: true }),
  stream: optionalField(boolean, { gatewayReads: true }),
  stream_options: optionalField(chatStreamOptions.object, { gatewayReads: true }),
  tools: optionalField(array),
  tool_choice: optionalField(unchecked),
  parallel_tool_calls: optionalField(boolean),
  response_format: optionalField(object),
  temperature: optionalField(numberFrom(0, 2), { gatewayReads: true }),
  top_p: optionalField(numberFrom(0, 1), { gatewayReads: true }),
  max_completion_tokens: optionalField(integerFrom(1), { gatewayReads: true }),
  max_tokens: optionalField(integerFrom(1), { gatewayReads: true }),
  stop: optionalField(stopSequences),
  n: optionalField(integerFrom(1), { gatewayReads: true }),
  seed: optionalField(integer),
  presence_penalty: optionalField(numberFrom(-2, 2), { gatewayReads: true }),
  frequency_penalty: optionalField(numberFrom(-2, 2), { gatewayReads: true }),
  reasoning_effort: optionalField(string),
  logprobs: optionalField(boolean),
  modalities: optionalField(strings),
  store: hintField(),
  metadata: hintField(),
  user: hintField(),
  safety_identifier: hintField(),
  prompt_cache_key: hintField(),
  prompt_cache_retention: hintField(),
  service_tier: hintField(),
})

/** A chat-completions request body, as `chatRequest` reads it. */
export type ChatRequest = PayloadType<typeof chatRequest>

/** Token usage of an answer. */
export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: { cached_tokens: number }
  completion_tokens_details?: { reasoning_tokens: number }
}

/** The finish reasons a chat answer can carry. */
export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call'

/** The answer message of a choice. */
export interface ChatResponseMessage {
  role: 'assistant'
  content: string | null
  refusal: string | null
  tool_calls?: ChatToolCall[]
}

/** A chat completion (`object: 'chat.completion'`). */
export interface ChatCompletion {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: { index: number; message: ChatResponseMessage; finish_reason: ChatFinishReason | null; logprobs: null }[]
  usage?: ChatUsage
}

/** The delta of a streamed choice. */
export interface ChatDelta {
  role?: 'assistant'
  content?: string
  refusal?: string
  tool_calls?: {
    index: number
    id?: string
    type?: 'function'
    function: { name?: string; arguments: string }
    extra_content?: { google: { thought_signature: string } }
  }[]
}

/** One streamed chunk (`object: 'chat.completion.chunk'`). */
export interface ChatChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  choices: { index: number; delta: ChatDelta; finish_reason: ChatFinishReason | null; logprobs?: null }[]
  usage?: ChatUsage | null
}

/** An OpenAI error body. */
export interface ChatErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null }
}
