// The dialects' names and their operations' names: the unions the rest of the package types itself with.
/** The wire formats the gateway speaks, to clients and to upstreams alike. */
export type DialectName = 'openai' | 'gemini'

/** Every dialect name, in the order the registry lists them. */
export const DIALECT_NAMES: readonly DialectName[] = ['openai', 'gemini']

/**
 * What a model call asks for; the value a record's `request.endpoint` and a usage event's `endpoint` carry.
 * `embeddings` is OpenAI's `POST /v1/embeddings`; `embedContent`, `batchEmbedContents` and `countTokens` are the
 * Gemini methods of those names (a `countTokens` call is never kept as a record: it is free upstream). `responses`
 * is OpenAI's Responses API (`POST /v1/responses`).
 */
export type Operation =
  | 'chat.completions'
  | 'generateContent'
  | 'responses'
  | 'embeddings'
  | 'embedContent'
  | 'batchEmbedContents'
  | 'countTokens'
