// The public types of the Anthropic dialect: its name, its operations' names and its upstreams' own options (imported
// by the package's names and option types; imports nothing).

/** What the package's public types take of the Anthropic dialect (see `DialectDeclarations` in ../names.ts). */
export interface AnthropicDeclaration {
  name: 'anthropic'
  /** `messages`: the Messages API (`POST /v1/messages`); `messages.countTokens`: its token counting (`POST /v1/messages/count_tokens`). */
  operation: 'messages' | 'messages.countTokens'
  options: AnthropicOptionFields
}

/** The options only an Anthropic upstream (`type: 'anthropic'`) takes, besides the common ones. */
export interface AnthropicOptionFields {
  /** Anthropic's Messages API. */
  type: 'anthropic'
  /**
   * The `anthropic-version` of calls translated from another dialect, and of Anthropic clients' calls that carry none
   * (a client's own `anthropic-version` and `anthropic-beta` go upstream as they came). A date, `YYYY-MM-DD`.
   * @default '2023-06-01'
   */
  anthropicVersion?: string
}
