// The public types of the upstreams an operator configures (`GatewayOptions.upstreams`), re-exported by types.ts.
import type { Dispatcher } from 'undici'
import type { BedrockOptionFields } from './dialects/bedrock/types.js'
import type { DialectName } from './dialects/names.js'
import type { VertexOptionFields } from './dialects/vertex/types.js'

/** How a pool of upstream keys picks the key of each call. */
export type KeySelection = 'round-robin' | 'least-in-flight'

/** One upstream API the gateway forwards to. */
export interface UpstreamOptions {
  /**
   * `openai`: any OpenAI-compatible chat-completions API; `gemini`: the Gemini API; `anthropic`: Anthropic's Messages
   * API; `azure`: Azure OpenAI.
   */
  type: DialectName
  /**
   * Base URL, e.g. `https://api.openai.com/v1`, `https://generativelanguage.googleapis.com` or
   * `https://{resource}.openai.azure.com/openai/v1`. Required, but for a type that builds it from other options
   * (`azure`'s `resource`, `bedrock`'s `region`).
   */
  baseUrl?: string
  /** The gateway's own key for this upstream; never shown to clients. Required unless `apiKeys`, `keyless` or a loopback host. */
  apiKey?: string
  /**
   * A pool of keys instead of one: calls are spread by `keySelection`, and a key answered 401, 403 or 429 rests
   * (its `retry-after`, else 1 s doubling to 60 s) while the call moves to the next. `alias` names the key in logs
   * and usage events. @default undefined
   */
  apiKeys?: ReadonlyArray<string | UpstreamKeyOptions>
  /**
   * How a pool picks each call's key among the keys not resting: `'round-robin'` spreads calls by weight (smooth
   * weighted round robin); `'least-in-flight'` takes the key with the fewest calls of this process in flight (a
   * stream counts until it ends), then the heavier, then the one picked longest ago. @default 'round-robin'
   */
  keySelection?: KeySelection
  /** An upstream that takes no key (a local model server); loopback hosts are keyless without it. @default false */
  keyless?: boolean
  /** Extra headers sent with every upstream request (one a dialect forwards, such as `anthropic-beta`, replaces the client's). @default {} */
  headers?: Record<string, string>
  /**
   * `type: 'anthropic'` only: the `anthropic-version` of calls translated from another dialect, and of Anthropic
   * clients' calls that carry none (a client's own `anthropic-version` and `anthropic-beta` go upstream as they came).
   * A date, `YYYY-MM-DD`. @default '2023-06-01'
   */
  anthropicVersion?: string
  /**
   * `type: 'openai'` only: the API calls translated from another dialect (Gemini, Anthropic clients) take.
   * `'responses'` sends them to `POST {baseUrl}/responses` (for models only the Responses API serves, such as
   * `gpt-5-codex`), with `store: false`; chat-completions and Responses clients' own calls stay passthrough.
   * @default 'chat'
   */
  api?: 'chat' | 'responses'
  /**
   * After `failures` failed calls in a row (unreachable, or 429/5xx) calls fail at once for `cooldownMs`, then one
   * probe decides. @default { failures: 5, cooldownMs: 30000 }
   */
  circuit?: { failures?: number; cooldownMs?: number }
  /**
   * `type: 'azure'` only: the Azure OpenAI resource, instead of `baseUrl`: calls go to
   * `https://{resource}.openai.azure.com/openai/v1`. @default undefined
   */
  resource?: string
  /**
   * `type: 'azure'` only, instead of `apiKey`: returns a Microsoft Entra ID access token (such as `@azure/identity`'s
   * `getBearerTokenProvider(credential, 'https://cognitiveservices.azure.com/.default')`), sent as the bearer token
   * of the `authorization` header. It is asked once and again 5 minutes before the token's `exp` (a token that is no JWT is
   * asked again after 5 minutes), never per call; a failure is the client's 502 `upstream_auth_failed`.
   * @default undefined
   */
  tokenProvider?: () => Promise<string>
  /**
   * `type: 'azure'` only: an Azure API version (`2024-10-21`, `2025-04-01-preview`): calls then take the deployments
   * API, `/openai/deployments/{upstreamModel}/chat/completions?api-version=…`. @default undefined (the v1 API, the
   * model in the body)
   */
  apiVersion?: string
  /**
   * An undici `Dispatcher` (an `Agent`, `Pool`, `ProxyAgent`…) this upstream's calls are sent through instead of the
   * gateway's: a proxy for one upstream only. The gateway's `interceptors` still wrap it; it is yours to close.
   * @default undefined (the gateway's dispatcher)
   */
  dispatcher?: Dispatcher
}

/** A Vertex AI upstream: Gemini and Claude models with an OAuth token (see docs/guides/vertex.md). */
export interface VertexUpstreamOptions extends Omit<UpstreamOptions, 'type' | 'baseUrl' | 'anthropicVersion' | 'api'>, VertexOptionFields {}

/** An AWS Bedrock upstream: Claude by InvokeModel, other models by Converse (see docs/guides/bedrock.md). */
export interface BedrockUpstreamOptions
  extends Omit<UpstreamOptions, 'type' | 'baseUrl' | 'anthropicVersion' | 'api'>,
    BedrockOptionFields {}

/** One key of an upstream's pool. */
export interface UpstreamKeyOptions {
  key: string
  /** Relative share of calls, a positive integer. @default 1 */
  weight?: number
  /** Its name in logs and usage events (letters, digits, `. _ -`). @default `key-<n>`, its position from 1 */
  alias?: string
}
