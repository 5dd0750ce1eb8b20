// The dialects' names and their operations' names: the unions the rest of the package types itself with. The list
// of dialects is the registry's (`REGISTERED_DIALECTS` in registered.ts); a dialect's `name` and its operations' names must be here.
/** The wire formats the gateway speaks, to clients and to upstreams alike. */
export type DialectName = 'openai' | 'gemini' | 'anthropic' | 'azure' | 'vertex' | 'bedrock'

/**
 * What a model call asks for; the value a record's `request.endpoint` and a usage event's `endpoint` carry.
 * `embeddings` is OpenAI's `POST /v1/embeddings`; `embedContent`, `batchEmbedContents` and `countTokens` are the
 * Gemini methods of those names (a `countTokens` call is never kept as a record: it is free upstream). `responses`
 * is OpenAI's Responses API (`POST /v1/responses`). `messages` is Anthropic's Messages API (`POST /v1/messages`),
 * `messages.countTokens` its token counting (`POST /v1/messages/count_tokens`). `bedrock.invoke` is Bedrock's
 * InvokeModel of an Anthropic model (`POST /model/{id}/invoke`, `…/invoke-with-response-stream`) and
 * `bedrock.converse` its Converse API (`POST /model/{id}/converse`, `…/converse-stream`), `bedrock.countTokens` its
 * CountTokens (`POST /model/{id}/count-tokens`); `vertex.rawPredict` is
 * Vertex AI's `:rawPredict` / `:streamRawPredict` of an Anthropic model and `vertex.countTokens` its
 * `count-tokens:rawPredict`.
 */
export type Operation =
  | 'chat.completions'
  | 'generateContent'
  | 'responses'
  | 'embeddings'
  | 'embedContent'
  | 'batchEmbedContents'
  | 'countTokens'
  | 'messages'
  | 'messages.countTokens'
  | 'bedrock.invoke'
  | 'bedrock.converse'
  | 'bedrock.countTokens'
  | 'vertex.rawPredict'
  | 'vertex.countTokens'
