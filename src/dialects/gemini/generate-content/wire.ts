// The subset of the generate-content wire format this module reads and writes.

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
export interface GeminiThinkingConfig {
  thinkingBudget?: number
  thinkingLevel?: string
}

/** `generationConfig`. */
export interface GeminiGenerationConfig {
  temperature?: number
  topP?: number
  maxOutputTokens?: number
  stopSequences?: string[]
  candidateCount?: number
  seed?: number
  presencePenalty?: number
  frequencyPenalty?: number
  responseMimeType?: string
  responseSchema?: GeminiSchema
  responseJsonSchema?: Record<string, unknown>
  thinkingConfig?: GeminiThinkingConfig
}

/** A generate-content request body (the model is in the path). */
export interface GeminiRequest {
  contents: GeminiContent[]
  systemInstruction?: { parts: { text: string }[] }
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[]
  toolConfig?: { functionCallingConfig: { mode: GeminiCallingMode; allowedFunctionNames?: string[] } }
  generationConfig?: GeminiGenerationConfig
}

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
