// What the gateway sends in Anthropic's shapes, as published: the types of the Anthropic TypeScript SDK.
//
// Source: `@anthropic-ai/sdk` 1.14.0 (the newest on npm when transcribed), `resources/messages/messages.d.ts`,
// `resources/models.d.ts` and `resources/shared.d.ts`. Objects transcribed: Message, Usage, CacheCreation,
// ServerToolUsage, OutputTokensDetails, RefusalStopDetails, Container, Diagnostics, the content blocks the gateway
// writes (TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock with DirectCaller and the ServerToolCaller
// forms), RawMessageStartEvent, RawMessageDeltaEvent (with its Delta and MessageDeltaUsage), RawMessageStopEvent,
// RawContentBlockStartEvent, RawContentBlockDeltaEvent (TextDelta, InputJSONDelta, CitationsDelta, ThinkingDelta,
// SignatureDelta), RawContentBlockStopEvent, ModelInfo with the page the list is, ErrorResponse (its `error.type`
// one of ErrorType, or the API's `request_too_large`). The SDK's stream reader also takes `ping` and `error` events, which no type names: `ping` is
// checked as `{ type: 'ping' }`, `error` as an ErrorResponse.
//
// A member a type declares without `?` is required, `| null` makes it nullable; objects are open (the SDK keeps
// members it does not know), so members the types do not name pass.
import { z } from 'zod'

const int = z.int().nonnegative()
const stopReason = z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'])
/** `OutputTokensDetails`. */
const outputTokensDetails = z.looseObject({ thinking_tokens: int })
/** `ServerToolUsage`. */
const serverToolUsage = z.looseObject({ web_fetch_requests: int, web_search_requests: int })
/** `RefusalStopDetails`. */
const stopDetails = z.looseObject({
  type: z.literal('refusal'),
  category: z.enum(['cyber', 'bio', 'frontier_llm', 'reasoning_extraction', 'general_harms']).nullable(),
  explanation: z.string().nullable(),
})
/** `Container`. */
const container = z.looseObject({
  id: z.string(),
  expires_at: z.string(),
  skills: z.array(z.looseObject({ skill_id: z.string(), type: z.enum(['anthropic', 'custom']), version: z.string() })).nullable(),
})

/** `Usage`: every member required, the cache and tier ones nullable. */
export const usage = z.looseObject({
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: int, ephemeral_5m_input_tokens: int }).nullable(),
  cache_creation_input_tokens: int.nullable(),
  cache_read_input_tokens: int.nullable(),
  inference_geo: z.string().nullable(),
  input_tokens: int,
  output_tokens: int,
  output_tokens_details: outputTokensDetails.nullable(),
  server_tool_use: serverToolUsage.nullable(),
  service_tier: z.enum(['standard', 'priority', 'batch']).nullable(),
  speed: z.enum(['standard', 'fast']).nullable(),
})

/** `DirectCaller`, `ServerToolCaller` and `ServerToolCaller20260120`. */
const caller = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('direct') }),
  z.looseObject({ type: z.literal('code_execution_20250825'), tool_id: z.string() }),
  z.looseObject({ type: z.literal('code_execution_20260120'), tool_id: z.string() }),
])

/** The content blocks the gateway writes: text, thinking, redacted thinking and tool use. */
const contentBlock = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string(), citations: z.array(z.looseObject({ type: z.string() })).nullable() }),
  z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
  z.looseObject({
    type: z.literal('tool_use'),
    id: z.string(),
    caller,
    input: z.unknown().refine((value) => value !== undefined, 'Required'),
    name: z.string(),
    toolset_name: z.string().nullable().optional(),
  }),
])

/** `Message`. */
export const message = z.looseObject({
  id: z.string(),
  container: container.nullable(),
  content: z.array(contentBlock),
  diagnostics: z.looseObject({ cache_miss_reason: z.unknown() }).nullable(),
  model: z.string(),
  role: z.literal('assistant'),
  stop_details: stopDetails.nullable(),
  stop_reason: stopReason.nullable(),
  stop_sequence: z.string().nullable(),
  type: z.literal('message'),
  usage,
})

/**
 * `ErrorType`: the `error.type` of an ErrorResponse; and `request_too_large`, which Anthropic's API answers a 413
 * with (its errors page and OpenAPI document name it) though the SDK's union does not.
 */
const errorType = z.enum([
  'request_too_large',
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'timeout_error',
  'api_error',
  'overloaded_error',
  'memory_precondition_failed_error',
  'memory_path_conflict_error',
  'conflict_error',
])

/** `ErrorResponse`: `request_id` is required, and null only where no request id is known. */
export const errorResponse = z.looseObject({
  type: z.literal('error'),
  error: z.looseObject({ type: errorType, message: z.string() }),
  request_id: z.string().nullable(),
})

/** `RawContentBlockDelta`. */
const blockDelta = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
  z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  z.looseObject({ type: z.literal('citations_delta'), citation: z.looseObject({ type: z.string() }) }),
  z.looseObject({ type: z.literal('thinking_delta'), thinking: z.string() }),
  z.looseObject({ type: z.literal('signature_delta'), signature: z.string() }),
])

/** `MessageDeltaUsage`. */
const deltaUsage = z.looseObject({
  cache_creation_input_tokens: int.nullable(),
  cache_read_input_tokens: int.nullable(),
  input_tokens: int.nullable(),
  output_tokens: int,
  output_tokens_details: outputTokensDetails.nullable(),
  server_tool_use: serverToolUsage.nullable(),
})

/** `RawMessageStreamEvent`, and the `ping` and `error` events the SDK's stream reader takes besides. */
export const streamEvent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('message_start'), message }),
  z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({
      container: container.nullable(),
      stop_details: stopDetails.nullable(),
      stop_reason: stopReason.nullable(),
      stop_sequence: z.string().nullable(),
    }),
    usage: deltaUsage,
  }),
  z.looseObject({ type: z.literal('message_stop') }),
  z.looseObject({ type: z.literal('content_block_start'), index: int, content_block: contentBlock }),
  z.looseObject({ type: z.literal('content_block_delta'), index: int, delta: blockDelta }),
  z.looseObject({ type: z.literal('content_block_stop'), index: int }),
  z.looseObject({ type: z.literal('ping') }),
  errorResponse,
])

/** An RFC 3339 time. */
const time = z.iso.datetime({ offset: true })
/** `CapabilitySupport`. */
const support = z.looseObject({ supported: z.boolean() })

/** `ModelCapabilities`. */
const capabilities = z.looseObject({
  batch: support,
  citations: support,
  code_execution: support,
  context_management: z.looseObject({ supported: z.boolean() }),
  effort: z.looseObject({ supported: z.boolean(), high: support, low: support, max: support, medium: support }),
  image_input: support,
  pdf_input: support,
  server_tools: z.looseObject({ supported: z.boolean(), code_execution: support, web_search: support }),
  structured_outputs: support,
  thinking: z.looseObject({ supported: z.boolean(), types: z.looseObject({}) }),
})

/** `ModelInfo`. */
export const modelInfo = z.looseObject({
  id: z.string(),
  capabilities: capabilities.nullable(),
  created_at: time,
  deprecated_at: time.nullable(),
  display_name: z.string(),
  lifecycle: z.enum(['active', 'deprecated', 'retired']),
  line: z.enum(['haiku', 'sonnet', 'opus', 'fable', 'mythos']).nullable(),
  max_input_tokens: int.nullable(),
  max_tokens: int.nullable(),
  retires_at: time.nullable(),
  type: z.literal('model'),
})

/** The page `GET /v1/models` answers (`Page<ModelInfo>`): its data, and where it starts and ends. */
export const modelPage = z.looseObject({
  data: z.array(modelInfo),
  has_more: z.boolean(),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
})
