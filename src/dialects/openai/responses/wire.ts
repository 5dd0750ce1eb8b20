// The subset of OpenAI's Responses wire format this module reads and writes, as a client's format and an upstream's.
import { field, hintField, optionalField, type PayloadType, payload } from '../../../translate/payload.js'
import { array, boolean, integer, integerFrom, numberFrom, object, string, unchecked } from '../../../translate/readers.js'

/** `input`: text (one user turn) or a list of items. */
const input = (value: unknown, path: string): string | unknown[] => (typeof value === 'string' ? value : array(value, path))

/** `stream_options`. */
export const responsesStreamOptions = payload({ include_obfuscation: optionalField(boolean) })

/** `text`: the answer's format. */
export const responsesText = payload({ format: optionalField(object), verbosity: optionalField(string) })

/** `reasoning`. */
export const responsesReasoning = payload({
  effort: optionalField(string),
  summary: optionalField(string),
  generate_summary: optionalField(string),
})

/**
 * A Responses request body: every member translation accepts (any other is refused by name), and those the gateway
 * reads before any translation. `input` is required here because a translated call has no stored prompt to supply it.
 */
export const responsesRequest = payload({
  model: field(string, { gatewayReads: true }),
  input: field(input, { gatewayReads: true }),
  instructions: optionalField(string),
  stream: optionalField(boolean, { gatewayReads: true }),
  stream_options: optionalField(responsesStreamOptions.object),
  tools: optionalField(array),
  tool_choice: optionalField(unchecked),
  parallel_tool_calls: optionalField(boolean),
  text: optionalField(responsesText.object),
  temperature: optionalField(numberFrom(0, 2), { gatewayReads: true }),
  top_p: optionalField(numberFrom(0, 1), { gatewayReads: true }),
  max_output_tokens: optionalField(integerFrom(1), { gatewayReads: true }),
  reasoning: optionalField(responsesReasoning.object),
  include: optionalField(array),
  metadata: hintField(),
  store: hintField(),
  user: hintField(),
  safety_identifier: hintField(),
  prompt_cache_key: hintField(),
  prompt_cache_retention: hintField(),
  client_metadata: hintField(),
  service_tier: hintField(),
  background: optionalField(boolean, { gatewayReads: true }),
  truncation: optionalField(string),
  top_logprobs: optionalField(integer),
  previous_response_id: optionalField(string),
  conversation: optionalField(unchecked),
  prompt: optionalField(object),
})

/** A Responses request body, as `responsesRequest` reads it. */
export type ResponsesRequest = PayloadType<typeof responsesRequest>

/** Where an output item stands. */
export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete'

/** A content part of an answer message. */
export type ResponsesOutputPart =
  | { type: 'output_text'; annotations: unknown[]; logprobs: unknown[]; text: string }
  | { type: 'refusal'; refusal: string }

/** A message item of an answer. */
export interface ResponsesMessageItem {
  id: string
  type: 'message'
  status: ResponsesItemStatus
  content: ResponsesOutputPart[]
  role: 'assistant'
}

/**
 * A function call item of an answer. `extra_content` carries a Gemini thought signature, where Google's
 * OpenAI-compatible API keeps it on chat tool calls; a client that sends the item back as received returns it.
 */
export interface ResponsesFunctionCallItem {
  id: string
  type: 'function_call'
  status: ResponsesItemStatus
  arguments: string
  call_id: string
  name: string
  /** The namespace of a function declared in one (`name` is then its name within it). */
  namespace?: string
  extra_content?: { google: { thought_signature: string } }
}

/**
 * A reasoning item. The gateway writes one to carry what another format's model needs back (its reasoning, a
 * Gemini thought signature) in `encrypted_content`, the field clients that keep no state send back as received.
 */
export interface ResponsesReasoningItem {
  id: string
  type: 'reasoning'
  summary: unknown[]
  encrypted_content: string
}

/** An item of an answer's `output`. */
export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesReasoningItem

/** Token usage of an answer. */
export interface ResponsesUsage {
  input_tokens: number
  /** `cache_write_tokens` is required of every usage since OpenAI's schema of July 2026. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
}

/** Why an answer stopped short. */
export type ResponsesIncompleteReason = 'max_output_tokens' | 'content_filter'

/** The settings a Responses object repeats from its request. */
export interface ResponsesEcho {
  background: false
  instructions: string | null
  max_output_tokens: number | null
  metadata: Record<string, unknown>
  parallel_tool_calls: true
  previous_response_id: null
  reasoning: { effort: string | null; summary: null }
  /** The gateway keeps no response for later retrieval: a translated answer is never stored upstream either. */
  store: false
  temperature: number | null
  text: { format: unknown; verbosity: unknown }
  tool_choice: unknown
  tools: unknown[]
  top_p: number | null
  truncation: 'disabled'
}

/** A Responses object (`object: 'response'`), whole or as a stream's opening and closing events carry it. */
export interface ResponsesResponse extends ResponsesEcho {
  id: string
  object: 'response'
  created_at: number
  status: 'in_progress' | 'completed' | 'incomplete'
  error: null
  incomplete_details: { reason: ResponsesIncompleteReason } | null
  model: string
  output: ResponsesOutputItem[]
  usage: ResponsesUsage | null
}

/** Where a streamed fragment belongs: the item and, for message content, the part. */
interface ItemRef {
  item_id: string
  output_index: number
}

/** A content part's place in its item. */
interface PartRef extends ItemRef {
  content_index: number
}

/** One streamed event, before its `sequence_number` is given. */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete'; response: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: ResponsesOutputItem }
  | ({ type: 'response.content_part.added' | 'response.content_part.done'; part: ResponsesOutputPart } & PartRef)
  | ({ type: 'response.output_text.delta'; delta: string; logprobs: unknown[] } & PartRef)
  | ({ type: 'response.output_text.done'; text: string; logprobs: unknown[] } & PartRef)
  | ({ type: 'response.refusal.delta'; delta: string } & PartRef)
  | ({ type: 'response.refusal.done'; refusal: string } & PartRef)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & ItemRef)
  | ({ type: 'response.function_call_arguments.done'; name: string; arguments: string } & ItemRef)
  | { type: 'error'; code: string | null; message: string; param: string | null }

/** A content part of an input message, as the gateway writes one upstream. */
export type ResponsesInputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }
  | { type: 'input_file'; file_data: string; filename?: string }

/** An input item, as the gateway writes one upstream. */
export type ResponsesInputItem =
  | { type: 'message'; role: 'user' | 'system'; content: ResponsesInputPart[] }
  | { type: 'message'; role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content: string }

/** A function tool; `parameters` and `strict` are required members of OpenAI's schema, and `strict` defaults to true. */
export interface ResponsesFunctionTool {
  type: 'function'
  name: string
  description?: string
  parameters: Record<string, unknown>
  strict: boolean
}

/** `tool_choice`, as the gateway writes it. */
export type ResponsesToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; mode: 'required'; tools: { type: 'function'; name: string }[] }

/** A Responses request, as the gateway writes one for an upstream from another dialect's call. */
export interface ResponsesUpstreamRequest {
  model: string
  input: ResponsesInputItem[]
  instructions?: string
  /** The gateway keeps the conversation in each request: nothing is left stored upstream. */
  store: false
  stream?: true
  tools?: ResponsesFunctionTool[]
  tool_choice?: ResponsesToolChoice
  parallel_tool_calls?: false
  text?: {
    format: { type: 'json_object' } | { type: 'json_schema'; name: string; description?: string; schema: unknown; strict?: boolean }
  }
  reasoning?: { effort: string; summary?: 'auto' }
  include?: ['reasoning.encrypted_content']
  max_output_tokens?: number
  temperature?: number
  top_p?: number
}
