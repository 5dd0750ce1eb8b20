// The public types of the Gemini dialect: its name, its operations' names and its upstreams' own options (imported by
// the package's names and option types; imports nothing).

/** What the package's public types take of the Gemini dialect (see `DialectDeclarations` in ../names.ts). */
export interface GeminiDeclaration {
  name: 'gemini'
  /**
   * The Gemini API's methods of these names (`models/{model}:generateContent`, `:streamGenerateContent` …). A
   * `countTokens` call is never kept as a record: it is free upstream.
   */
  operation: 'generateContent' | 'embedContent' | 'batchEmbedContents' | 'countTokens'
  options: GeminiOptionFields
}

/** The options only a Gemini upstream (`type: 'gemini'`) takes, besides the common ones: none. */
export interface GeminiOptionFields {
  /** The Gemini API (`https://generativelanguage.googleapis.com`). */
  type: 'gemini'
}
