// What the gateway sends in OpenAI's shapes, as published: OpenAI's OpenAPI document.
//
// Document: openai/openai-openapi, `openapi.yaml`, info.version 2.3.0 (commit f85dbe2, 2026-08-21).
// Objects transcribed (components/schemas): CreateChatCompletionResponse, ChatCompletionResponseMessage,
// ChatCompletionMessageToolCall, CreateChatCompletionStreamResponse, ChatCompletionStreamResponseDelta,
// ChatCompletionMessageToolCallChunk, CompletionUsage, Response (with ModelResponseProperties and
// ResponseProperties), ResponseUsage (input_tokens_details.cache_write_tokens included), ResponseError,
// OutputMessage, OutputTextContent, RefusalContent, FunctionToolCall, FunctionTool, ToolChoiceParam's options and
// function form, ResponseTextParam, Reasoning, the ResponseStreamEvent variants the gateway writes (response.created,
// .in_progress, .completed, .incomplete, .failed, .output_item.added/.done, .content_part.added/.done,
// .output_text.delta/.done, .refusal.delta/.done, .function_call_arguments.delta/.done, error),
// CreateEmbeddingResponse, Embedding, Model, ListModelsResponse, ErrorResponse and Error.
//
// Every `required` member is required and every enum is as published. OpenAPI objects are open (none of these says
// `additionalProperties: false`), so members the document does not name pass; members it names are checked.
import { z } from 'zod'

const int = z.int()
/** `type: number, format: unixtime` (Response.created_at) and `type: integer, format: unixtime` (created). */
const unixtime = z.number().nonnegative()
/** `Metadata`: string values under string keys, or null. */
const metadata = z.record(z.string(), z.string()).nullable()
/** `ServiceTier` (chat) and `ServiceTierResponses`: one enum, `ultrafast` in the Responses one only. */
const serviceTier = z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast']).nullable()
const serviceTierResponses = z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']).nullable()

/** `CompletionUsage`. */
export const completionUsage = z.looseObject({
  completion_tokens: int,
  prompt_tokens: int,
  total_tokens: int,
  completion_tokens_details: z
    .looseObject({
      accepted_prediction_tokens: int.optional(),
      audio_tokens: int.optional(),
      reasoning_tokens: int.optional(),
      text_tokens: int.optional(),
      rejected_prediction_tokens: int.optional(),
    })
    .optional(),
  prompt_tokens_details: z
    .looseObject({
      audio_tokens: int.optional(),
      cached_tokens: int.optional(),
      text_tokens: int.optional(),
      image_tokens: int.optional(),
      cache_write_tokens: int.optional(),
    })
    .optional(),
})

/** The `finish_reason` enum of a choice and of a chunk's choice. */
const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call'])

/** `ChatCompletionMessageToolCall` (the `function` form; `ChatCompletionMessageCustomToolCall` is never written). */
const messageToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
})

/** `ChatCompletionResponseMessage`: `role`, `content` and `refusal` are required, the last two nullable. */
const responseMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  refusal: z.string().nullable(),
  tool_calls: z.array(messageToolCall).optional(),
  annotations: z
    .array(
      z.looseObject({
        type: z.literal('url_citation'),
        url_citation: z.looseObject({ end_index: int, start_index: int, url: z.string(), title: z.string() }),
      }),
    )
    .optional(),
})

/** A choice's `logprobs` object: `content` and `refusal` are required, each a list or null. */
const choiceLogprobs = z.looseObject({ content: z.array(z.unknown()).nullable(), refusal: z.array(z.unknown()).nullable() })

/** `CreateChatCompletionResponse`. */
export const createChatCompletionResponse = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: int,
  model: z.string(),
  choices: z.array(
    z.looseObject({ finish_reason: finishReason, index: int, message: responseMessage, logprobs: choiceLogprobs.nullable() }),
  ),
  usage: completionUsage.optional(),
  service_tier: serviceTier.optional(),
  system_fingerprint: z.string().optional(),
  metadata: metadata.optional(),
})

/** `ChatCompletionStreamResponseDelta` with `ChatCompletionMessageToolCallChunk`s. */
const streamDelta = z.looseObject({
  content: z.string().nullable().optional(),
  role: z.enum(['developer', 'system', 'user', 'assistant', 'tool']).optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        index: int,
        id: z.string().optional(),
        type: z.literal('function').optional(),
        function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
      }),
    )
    .optional(),
})

/** `CreateChatCompletionStreamResponse`: one chunk, the `data` of one event of a chat stream. */
export const createChatCompletionStreamResponse = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: int,
  model: z.string(),
  choices: z.array(
    z.looseObject({
      delta: streamDelta,
      finish_reason: finishReason.nullable(),
      index: int,
      logprobs: choiceLogprobs.nullable().optional(),
    }),
  ),
  usage: completionUsage.nullable().optional(),
  service_tier: serviceTier.optional(),
  system_fingerprint: z.string().optional(),
  obfuscation: z.string().optional(),
})

/** `ResponseUsage`: every member required, `cache_write_tokens` among them. */
export const responseUsage = z.looseObject({
  input_tokens: int,
  input_tokens_details: z.looseObject({ cached_tokens: int, cache_write_tokens: int }),
  output_tokens: int,
  output_tokens_details: z.looseObject({ reasoning_tokens: int }),
  total_tokens: int,
})

/** `OutputTextContent` and `RefusalContent`: the parts of an output message (`OutputMessageContent`). */
const outputContent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) }),
  z.looseObject({ type: z.literal('refusal'), refusal: z.string() }),
])

const itemStatus = z.enum(['in_progress', 'completed', 'incomplete'])

/** `OutputItem`, in the two forms the gateway writes: `OutputMessage` and `FunctionToolCall`. */
const outputItem = z.discriminatedUnion('type', [
  z.looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    content: z.array(outputContent),
    status: itemStatus,
  }),
  z.looseObject({
    type: z.literal('function_call'),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
    id: z.string().optional(),
    status: itemStatus.optional(),
  }),
])

/** `ResponseErrorCode`. */
const responseErrorCode = z.enum([
  'server_error',
  'rate_limit_exceeded',
  'invalid_prompt',
  'data_residency_mismatch',
  'bio_policy',
  'vector_store_timeout',
  'invalid_image',
  'invalid_image_format',
  'invalid_base64_image',
  'invalid_image_url',
  'image_too_large',
  'image_too_small',
  'image_parse_error',
  'image_content_policy_violation',
  'invalid_image_mode',
  'image_file_too_large',
  'unsupported_image_media_type',
  'empty_image_file',
  'failed_to_download_image',
  'image_file_not_found',
])

/** `FunctionTool` (the tool a Responses object echoes): `type`, `name`, `strict` and `parameters` are required. */
const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string(),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable(),
  strict: z.boolean().nullable(),
})

/** `ToolChoiceParam`: `ToolChoiceOptions`, or one of its object forms (each with a `type`; `ToolChoiceFunction` names one). */
const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string() }),
  z.looseObject({ type: z.literal('allowed_tools'), mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({})) }),
  z.looseObject({ type: z.string().refine((type) => type !== 'function' && type !== 'allowed_tools') }),
])

/** `TextResponseFormatConfiguration`: text, a JSON schema (named) or JSON object. */
const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string(), schema: z.record(z.string(), z.unknown()) }),
  z.looseObject({ type: z.literal('json_object') }),
])

/** `ReasoningEffort`. */
const reasoningEffort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullable()

/** `Response`, from `ModelResponseProperties`, `ResponseProperties` and its own members. */
export const response = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: unixtime,
  error: z.looseObject({ code: responseErrorCode, message: z.string() }).nullable(),
  incomplete_details: z.looseObject({ reason: z.enum(['max_output_tokens', 'content_filter']).optional() }).nullable(),
  instructions: z.union([z.string(), z.array(z.unknown())]).nullable(),
  model: z.string(),
  tools: z.array(z.union([functionTool, z.looseObject({ type: z.string().refine((type) => type !== 'function') })])),
  output: z.array(outputItem),
  parallel_tool_calls: z.boolean(),
  metadata,
  tool_choice: toolChoice,
  temperature: z.number().min(0).max(2).nullable(),
  top_p: z.number().min(0).max(1).nullable(),
  status: z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']).optional(),
  completed_at: unixtime.nullable().optional(),
  usage: responseUsage.optional(),
  background: z.boolean().nullable().optional(),
  max_output_tokens: int.nullable().optional(),
  max_tool_calls: int.nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  reasoning: z
    .looseObject({ effort: reasoningEffort.optional(), summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional() })
    .nullable()
    .optional(),
  text: z.looseObject({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() }).optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  service_tier: serviceTierResponses.optional(),
  top_logprobs: int.min(0).max(20).nullable().optional(),
  user: z.string().optional(),
  safety_identifier: z.string().max(64).nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
})

/** The members every stream event has: its `type` and `sequence_number`. */
const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ type: z.literal(type), sequence_number: int, ...shape })

/** Where a content event points: its item, the item's output index and the part's content index. */
const inPart = { item_id: z.string(), output_index: int, content_index: int }

/** The `ResponseStreamEvent` variants the gateway writes, by their `type`. */
export const responseStreamEvent = z.discriminatedUnion('type', [
  event('response.created', { response }),
  event('response.in_progress', { response }),
  event('response.completed', { response }),
  event('response.incomplete', { response }),
  event('response.failed', { response }),
  event('response.output_item.added', { output_index: int, item: outputItem }),
  event('response.output_item.done', { output_index: int, item: outputItem }),
  event('response.content_part.added', { ...inPart, part: outputContent }),
  event('response.content_part.done', { ...inPart, part: outputContent }),
  event('response.output_text.delta', { ...inPart, delta: z.string(), logprobs: z.array(z.unknown()) }),
  event('response.output_text.done', { ...inPart, text: z.string(), logprobs: z.array(z.unknown()) }),
  event('response.refusal.delta', { ...inPart, delta: z.string() }),
  event('response.refusal.done', { ...inPart, refusal: z.string() }),
  event('response.function_call_arguments.delta', { item_id: z.string(), output_index: int, delta: z.string() }),
  event('response.function_call_arguments.done', { item_id: z.string(), name: z.string(), output_index: int, arguments: z.string() }),
  event('error', { code: z.string().nullable(), message: z.string(), param: z.string().nullable() }),
])

/** `CreateEmbeddingResponse` with `Embedding`s (`embedding` is a list of floats: the `float` encoding). */
export const createEmbeddingResponse = z.looseObject({
  object: z.literal('list'),
  model: z.string(),
  data: z.array(z.looseObject({ index: int, object: z.literal('embedding'), embedding: z.array(z.number()) })),
  usage: z.looseObject({ prompt_tokens: int, total_tokens: int }),
})

/** `Model`. */
export const model = z.looseObject({ id: z.string(), object: z.literal('model'), created: int, owned_by: z.string() })

/** `ListModelsResponse`. */
export const listModelsResponse = z.looseObject({ object: z.literal('list'), data: z.array(model) })

/** `ErrorResponse` with `Error`: `type`, `message`, `param` and `code` are all required, the last two nullable. */
export const errorResponse = z.looseObject({
  error: z.looseObject({ type: z.string(), message: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
})
