// What the gateway sends in Google's shapes, as published: the Generative Language API v1beta protos and
// google.rpc's Code and Status, mapped by the proto3 JSON rules.
//
// Documents: googleapis/googleapis, google/ai/generativelanguage/v1beta/{generative_service,content,model,
// model_service}.proto (last changed by commit d90d23fa, 2026-03-10) and google/rpc/{code,status}.proto (commit
// ebd1d23a, 2026-03-31); the error envelope `{ "error": Status + "status" }` is the JSON mapping of Google's API
// design guide (errors, HTTP mapping), where `code` is the HTTP status and `status` the google.rpc.Code name.
// Objects transcribed: GenerateContentResponse (with PromptFeedback and UsageMetadata), Candidate, Content, Part,
// FunctionCall, ModalityTokenCount, EmbedContentResponse, BatchEmbedContentsResponse, ContentEmbedding,
// CountTokensResponse, Model, ListModelsResponse, google.rpc.Status, and google.rpc.Code's HTTP mapping.
//
// Proto3 JSON: member names are lowerCamelCase; enums are their value names; int32 and float are JSON numbers;
// bytes are base64 text; every member may be absent (a printer leaves out default values), so only the members a
// proto marks REQUIRED are required here. A proto message has a closed set of fields, which a strict parser holds
// a client to: the objects are strict, and a member the proto does not define is a violation. Members the gateway
// never writes are typed loosely (`unknown`), since only their names are checked.
import { z } from 'zod'

const int32 = z.int32()
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'bytes are base64 text in proto3 JSON')

/** google.rpc.Code: each name with the HTTP status its comment maps it to ("HTTP Mapping: …"). */
export const HTTP_BY_CODE_NAME: Readonly<Record<string, number>> = {
  OK: 200,
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  UNAUTHENTICATED: 401,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
}

/** The google.rpc.Code names. */
const codeName = z.enum(Object.keys(HTTP_BY_CODE_NAME) as [string, ...string[]])

/** `Modality` (content.proto). */
const modality = z.enum(['MODALITY_UNSPECIFIED', 'TEXT', 'IMAGE', 'VIDEO', 'AUDIO', 'DOCUMENT'])

/** `ModalityTokenCount` (content.proto). */
const modalityTokenCount = z.strictObject({ modality: modality.optional(), tokenCount: int32.optional() })

/** `FunctionCall` (content.proto): `name` is REQUIRED; `args` a Struct (a JSON object). */
const functionCall = z.strictObject({
  id: z.string().optional(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
})

/** The members of `Part`'s `oneof data`: at most one is set. */
const PART_DATA = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'executableCode', 'codeExecutionResult'] as const

/** `Part` (content.proto). */
export const part = z
  .strictObject({
    text: z.string().optional(),
    inlineData: z.unknown().optional(),
    functionCall: functionCall.optional(),
    functionResponse: z.unknown().optional(),
    fileData: z.unknown().optional(),
    executableCode: z.unknown().optional(),
    codeExecutionResult: z.unknown().optional(),
    videoMetadata: z.unknown().optional(),
    thought: z.boolean().optional(),
    thoughtSignature: base64.optional(),
    partMetadata: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((value) => PART_DATA.filter((name) => value[name] !== undefined).length <= 1, 'a Part sets at most one member of its oneof data')

/** `Content` (content.proto). */
export const content = z.strictObject({ parts: z.array(part).optional(), role: z.string().optional() })

/** `Candidate.FinishReason` (generative_service.proto). */
const finishReason = z.enum([
  'FINISH_REASON_UNSPECIFIED',
  'STOP',
  'MAX_TOKENS',
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'OTHER',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'MALFORMED_FUNCTION_CALL',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_OTHER',
  'NO_IMAGE',
  'IMAGE_RECITATION',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
])

/** `Candidate` (generative_service.proto). */
export const candidate = z.strictObject({
  index: int32.optional(),
  content: content.optional(),
  finishReason: finishReason.optional(),
  finishMessage: z.string().optional(),
  safetyRatings: z.array(z.unknown()).optional(),
  citationMetadata: z.unknown().optional(),
  tokenCount: int32.optional(),
  groundingAttributions: z.array(z.unknown()).optional(),
  groundingMetadata: z.unknown().optional(),
  avgLogprobs: z.number().optional(),
  logprobsResult: z.unknown().optional(),
  urlContextMetadata: z.unknown().optional(),
})

/** `GenerateContentResponse.PromptFeedback` (generative_service.proto). */
const promptFeedback = z.strictObject({
  blockReason: z.enum(['BLOCK_REASON_UNSPECIFIED', 'SAFETY', 'OTHER', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'IMAGE_SAFETY']).optional(),
  safetyRatings: z.array(z.unknown()).optional(),
})

/** `GenerateContentResponse.UsageMetadata` (generative_service.proto). */
export const usageMetadata = z.strictObject({
  promptTokenCount: int32.optional(),
  cachedContentTokenCount: int32.optional(),
  candidatesTokenCount: int32.optional(),
  toolUsePromptTokenCount: int32.optional(),
  thoughtsTokenCount: int32.optional(),
  totalTokenCount: int32.optional(),
  promptTokensDetails: z.array(modalityTokenCount).optional(),
  cacheTokensDetails: z.array(modalityTokenCount).optional(),
  candidatesTokensDetails: z.array(modalityTokenCount).optional(),
  toolUsePromptTokensDetails: z.array(modalityTokenCount).optional(),
})

/** `GenerateContentResponse` (generative_service.proto): a whole answer, and each event of a stream. */
export const generateContentResponse = z.strictObject({
  candidates: z.array(candidate).optional(),
  promptFeedback: promptFeedback.optional(),
  usageMetadata: usageMetadata.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
})

/** `ContentEmbedding` (generative_service.proto). */
const contentEmbedding = z.strictObject({ values: z.array(z.number()).optional() })

/** `EmbedContentResponse` (generative_service.proto). */
export const embedContentResponse = z.strictObject({ embedding: contentEmbedding.optional() })

/** `BatchEmbedContentsResponse` (generative_service.proto). */
export const batchEmbedContentsResponse = z.strictObject({ embeddings: z.array(contentEmbedding).optional() })

/** `CountTokensResponse` (generative_service.proto). */
export const countTokensResponse = z.strictObject({
  totalTokens: int32.optional(),
  cachedContentTokenCount: int32.optional(),
  promptTokensDetails: z.array(modalityTokenCount).optional(),
  cacheTokensDetails: z.array(modalityTokenCount).optional(),
})

/**
 * The names `supportedGenerationMethods` may hold: a `repeated string` of API method names in lowerCamelCase
 * (model.proto), here the RPCs of the v1beta services that act on a model (generative, text, discuss, prediction
 * and cache services).
 */
const generationMethod = z.enum([
  'generateContent',
  'generateAnswer',
  'streamGenerateContent',
  'embedContent',
  'batchEmbedContents',
  'countTokens',
  'bidiGenerateContent',
  'generateText',
  'embedText',
  'batchEmbedText',
  'countTextTokens',
  'generateMessage',
  'countMessageTokens',
  'predict',
  'predictLongRunning',
  'createCachedContent',
])

/** `Model` (model.proto): `name`, `baseModelId` and `version` are REQUIRED. */
export const model = z.strictObject({
  name: z.string().regex(/^models\/[^/]+$/, 'a Model name is models/{model}'),
  baseModelId: z.string(),
  version: z.string(),
  displayName: z.string().optional(),
  description: z.string().optional(),
  inputTokenLimit: int32.optional(),
  outputTokenLimit: int32.optional(),
  supportedGenerationMethods: z.array(generationMethod).optional(),
  temperature: z.number().optional(),
  maxTemperature: z.number().optional(),
  topP: z.number().optional(),
  topK: int32.optional(),
  thinking: z.boolean().optional(),
})

/** `ListModelsResponse` (model_service.proto). */
export const listModelsResponse = z.strictObject({ models: z.array(model).optional(), nextPageToken: z.string().optional() })

/**
 * The error envelope: google.rpc.Status (`code`, `message`, `details`, each detail an Any with its `@type`) with the
 * `status` name, where `code` is the HTTP status code.proto maps that name to.
 */
export const errorEnvelope = z.strictObject({
  error: z
    .strictObject({
      code: int32,
      message: z.string(),
      status: codeName,
      details: z.array(z.looseObject({ '@type': z.string() })).optional(),
    })
    .refine((error) => HTTP_BY_CODE_NAME[error.status] === error.code, {
      message: 'error.code is not the HTTP status google.rpc.Code maps error.status to',
    }),
})
