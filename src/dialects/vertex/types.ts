// The public types of the Vertex AI dialect: its name, its operations' names and its upstreams' own options (imported
// by the package's names and option types; imports nothing).

/** What the package's public types take of the Vertex AI dialect (see `DialectDeclarations` in ../names.ts). */
export interface VertexDeclaration {
  name: 'vertex'
  /** `vertex.rawPredict`: `:rawPredict` / `:streamRawPredict` of an Anthropic model; `vertex.countTokens`: its `count-tokens:rawPredict`. */
  operation: 'vertex.rawPredict' | 'vertex.countTokens'
  options: VertexOptionFields
}

/** A token function's answer: the access token alone (the function keeps its own cache), or with its expiry (epoch ms). */
export type VertexToken = string | { token: string; expiresAt: number }

/** A service-account key as Google issues it (its JSON file); the fields the gateway reads. */
export interface VertexServiceAccount {
  type?: string
  client_email: string
  /** The PEM private key (RSA): it signs the token requests, and never leaves the process. */
  private_key: string
  private_key_id?: string
  /** The token endpoint the key's assertions are exchanged at. @default 'https://oauth2.googleapis.com/token' */
  token_uri?: string
  project_id?: string
}

/**
 * `credentials` of a Vertex AI upstream: a service-account key (the JSON object Google issues, or the path of its
 * file), or a function returning an access token. Absent: Application Default Credentials.
 */
export type VertexCredentials = VertexServiceAccount | string | (() => Promise<VertexToken> | VertexToken)

/** The options only a Vertex AI upstream (`type: 'vertex'`) takes, besides the common ones. */
export interface VertexOptionFields {
  /** Vertex AI: Gemini and Claude models with an OAuth token (see docs/guides/vertex.md). */
  type: 'vertex'
  /** The Google Cloud project id; @default the service-account key's `project_id`. Not needed in express mode (`apiKey`). */
  project?: string
  /** `'global'`, `'us'`, `'eu'` or a region such as `'us-central1'`: it picks the endpoint host. Required with a project. */
  location?: string
  /**
   * A host root (`https://us-central1-aiplatform.googleapis.com`, a Private Service Connect endpoint, a mock); the
   * gateway adds `/v1/projects/{project}/locations/{location}/publishers/…`. @default the location's endpoint
   */
  baseUrl?: string
  /** The OAuth credentials; @default Application Default Credentials (the optional peer `google-auth-library`). */
  credentials?: VertexCredentials
  /**
   * How long, in ms, the gateway waits for an access token (a service-account key's exchange at its `token_uri`, or
   * Application Default Credentials) before the calls waiting on it fail with 502 `upstream_auth_failed` (the next call
   * tries again). Not with `apiKey`. @default 10000
   */
  tokenTimeoutMs?: number
}
