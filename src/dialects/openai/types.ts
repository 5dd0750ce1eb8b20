// The public types of the OpenAI dialect: its name, its operations' names and its upstreams' own options (imported by
// the package's names and option types; imports nothing).

/** What the package's public types take of the OpenAI dialect (see `DialectDeclarations` in ../names.ts). */
export interface OpenAIDeclaration {
  name: 'openai'
  /**
   * `chat.completions`: Chat Completions (`POST /v1/chat/completions`); `responses`: the Responses API (`POST
   * /v1/responses`); `embeddings`: `POST /v1/embeddings`.
   */
  operation: 'chat.completions' | 'responses' | 'embeddings'
  options: OpenAIOptionFields
}

/** The options only an OpenAI upstream (`type: 'openai'`) takes, besides the common ones. */
export interface OpenAIOptionFields {
  /** Any OpenAI-compatible API: chat completions, Responses, embeddings. */
  type: 'openai'
  /**
   * The API calls translated from another dialect (Gemini, Anthropic clients) take. `'responses'` sends them to
   * `POST {baseUrl}/responses` (for models only the Responses API serves, such as `gpt-5-codex`), with `store: false`;
   * chat-completions and Responses clients' own calls stay passthrough. @default 'chat'
   */
  api?: 'chat' | 'responses'
}
