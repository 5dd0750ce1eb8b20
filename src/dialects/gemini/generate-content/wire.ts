// The subset of the generate-content wire format this module reads and writes.
import { field, optionalField, type PayloadOptions, type PayloadType, payload } from '../../../translate/payload.js'
import {
  array,
  boolean,
  camelKeys,
  integer,
  type JsonObject,
  number,
  object,
  string,
  strings,
  unchecked,
} from '../../../translate/readers.js'

/** Every level of a request is a protobuf message: its fields may be sent in snake_case too. */
export const PROTOBUF: PayloadOptions = { keys: camelKeys }

/** A protobuf message level whose members are not listed (only one of them is read): its names in lowerCamelCase. */
export const message = (value: unknown, path: string): JsonObject => camelKeys(object(value, path), path)

/** A Gemini `Schema`: the OpenAPI 3.0 subset `parameters` and `responseSchema` take. */
export interface GeminiSchema {
  type?: string
  format?: string
  title?: string
  description?: string
  nullable?: boolean
  enum?: string[]
  items?: GeminiSchema
  minItems?: string | number
  maxItems?: string | number
  properties?: Record<string, GeminiSchema>
  required?: string[]
  propertyOrdering?: string[]
  minProperties?: string | number
  maxProperties?: string | number
  minLength?: string | number
  maxLength?: string | number
  pattern?: string
  minimum?: number
  maximum?: number
  default?: unknown
  example?: unknown
  anyOf?: GeminiSchema[]
}

/** A function call the model made. */
export interface GeminiFunctionCall {
  id?: string
  name: string
  args: Record<string, unknown>
}

/** One part of a content. `thoughtSignature` rides on the part that carries the call. */
export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType?: string; fileUri: string } }
  | { functionCall: GeminiFunctionCall; thoughtSignature?: string }
  | { functionResponse: { id?: string; name: string; response: Record<string, unknown> } }

/** One turn. */
export interface GeminiContent {
  role: 'user' | 'model'
  parts: GeminiPart[]
}

/** A function declaration: `parameters` (the Schema subset) or `parametersJsonSchema` (full JSON Schema). */
export interface GeminiFunctionDeclaration {
  name: string
  description?: string
  parameters?: GeminiSchema
  parametersJsonSchema?: Record<string, unknown>
}

/** The function-calling modes. */
export type GeminiCallingMode = 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED'

/** `generationConfig.thinkingConfig`. */
export const geminiThinkingConfig = payload(
  { thinkingBudget: optionalField(integer), thinkingLevel: optionalField(string), includeThoughts: optionalField(boolean) },
  PROTOBUF,
)

/** `generationConfig.thinkingConfig`, as `geminiThinkingConfig` reads it. */
export type GeminiThinkingConfig = PayloadType<typeof geminiThinkingConfig>

/** `generationConfig`; the schema members are read by `fromGeminiSchema`, which names what it cannot take. */
export const geminiGenerationConfig = payload(
  {
    temperature: optionalField(number),
    topP: optionalField(number),
    topK: optionalField(integer),
    maxOutputTokens: optionalField(integer),
    stopSequences: optionalField(strings),
    candidateCount: optionalField(integer),
    seed: optionalField(integer),
    presencePenalty: optionalField(number),
    frequencyPenalty: optionalField(number),
    responseMimeType: optionalField(string),
    responseSchema: optionalField(unchecked),
    responseJsonSchema: optionalField(object),
    responseModalities: optionalField(strings),
    thinkingConfig: optionalField(geminiThinkingConfig.object),
  },
  PROTOBUF,
)

/** `generationConfig`, as `geminiGenerationConfig` reads it. */
export type GeminiGenerationConfig = PayloadType<typeof geminiGenerationConfig>

/** `systemInstruction`: text parts only. */
export const geminiSystemInstruction = payload({ parts: field(array), role: optionalField(string) }, PROTOBUF)

/** `toolConfig.functionCallingConfig`. */
export const geminiFunctionCallingConfig = payload({ mode: optionalField(string), allowedFunctionNames: optionalField(strings) }, PROTOBUF)

/**
 * A generate-content request body (the model is in the path): every member translation accepts (any other is refused
 * by name), and those the gateway reads before any translation. Members read deeper are read member by member.
 */
export const geminiRequest = payload(
  {
    contents: field(array, { gatewayReads: true }),
    systemInstruction: optionalField(geminiSystemInstruction.object),
    tools: optionalField(array),
    toolConfig: optionalField(message),
    generationConfig: optionalField(geminiGenerationConfig.object),
    safetySettings: optionalField(array),
  },
  PROTOBUF,
)

/** A generate-content request body, as `geminiRequest` reads it. */
export type GeminiRequest = PayloadType<typeof geminiRequest>

/** `usageMetadata`. */
export interface GeminiUsage {
  promptTokenCount: number
  candidatesTokenCount: number
  totalTokenCount: number
  cachedContentTokenCount?: number
  thoughtsTokenCount?: number
  toolUsePromptTokenCount?: number
}

/** One candidate answer. */
export interface GeminiCandidate {
  index: number
  content: GeminiContent
  finishReason?: string
}

/** A generate-content response, whole or one streamed event. */
export interface GeminiResponse {
  candidates: GeminiCandidate[]
  promptFeedback?: { blockReason: string }
  usageMetadata?: GeminiUsage
  modelVersion?: string
  responseId?: string
}

/** A Google API error body. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string }
}
