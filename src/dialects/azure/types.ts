// The public types of the Azure OpenAI dialect: its name, its operations' names and its upstreams' own options
// (imported by the package's names and option types; imports nothing).

/** What the package's public types take of the Azure OpenAI dialect (see `DialectDeclarations` in ../names.ts). */
export interface AzureDeclaration {
  name: 'azure'
  /** None of its own: its upstreams serve OpenAI's operations, on Azure's paths and credentials. */
  operation: never
  options: AzureOptionFields
}

/** The options only an Azure OpenAI upstream (`type: 'azure'`) takes, besides the common ones. */
export interface AzureOptionFields {
  /** Azure OpenAI. */
  type: 'azure'
  /** As OpenAI's: the API calls translated from another dialect take. @default 'chat' */
  api?: 'chat' | 'responses'
  /**
   * The Azure OpenAI resource, instead of `baseUrl`: calls go to `https://{resource}.openai.azure.com/openai/v1`.
   * @default undefined
   */
  resource?: string
  /**
   * Instead of `apiKey`: returns a Microsoft Entra ID access token (such as `@azure/identity`'s
   * `getBearerTokenProvider(credential, 'https://cognitiveservices.azure.com/.default')`), sent as the bearer token
   * of the `authorization` header. It is asked once and again 5 minutes before the token's `exp` (a token that is no JWT is
   * asked again after 5 minutes), never per call; a failure is the client's 502 `upstream_auth_failed`.
   * @default undefined
   */
  tokenProvider?: () => Promise<string>
  /**
   * An Azure API version (`2024-10-21`, `2025-04-01-preview`): calls then take the deployments API,
   * `/openai/deployments/{upstreamModel}/chat/completions?api-version=…`. @default undefined (the v1 API, the model
   * in the body)
   */
  apiVersion?: string
}
