// The public types of the upstreams an operator configures (`GatewayOptions.upstreams`), re-exported by types.ts: the
// options every upstream takes, and those each dialect declares for its own (`<dialect>/types.ts`), keyed by `type`.
import type { Dispatcher } from 'undici'
import type { BedrockOptionFields } from './dialects/bedrock/types.js'
import type { DialectName, DialectOptionFields } from './dialects/names.js'
import type { VertexOptionFields } from './dialects/vertex/types.js'

/** How a pool of upstream keys picks the key of each call. */
export type KeySelection = 'round-robin' | 'least-in-flight'

/** The options every upstream takes, whatever its `type`. */
export interface CommonUpstreamOptions {
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
   * After `failures` failed calls in a row (unreachable, or 429/5xx) calls fail at once for `cooldownMs`, then one
   * probe decides. @default { failures: 5, cooldownMs: 30000 }
   */
  circuit?: { failures?: number; cooldownMs?: number }
  /**
   * An undici `Dispatcher` (an `Agent`, `Pool`, `ProxyAgent`…) this upstream's calls are sent through instead of the
   * gateway's: a proxy for one upstream only. The gateway's `interceptors` still wrap it; it is yours to close.
   * @default undefined (the gateway's dispatcher)
   */
  dispatcher?: Dispatcher
}

// A flat object type of an intersection: its members keep their docs, and the docs' reader walks it as one object.
type Flat<T> = { [Key in keyof T]: T[Key] }

/** The common options with a dialect's own `Fields` (which may say more of one of them, as Vertex AI's of `baseUrl`). */
type WithCommon<Fields> = Flat<Omit<CommonUpstreamOptions, keyof Fields> & Fields>

/** The options of an upstream of the dialect `Name`: the common ones, and those the dialect declares (`<dialect>/types.ts`). */
export type UpstreamOptionsOf<Name extends DialectName> = WithCommon<DialectOptionFields<Name>>

/** One upstream API the gateway forwards to: the common options and those of its `type`'s dialect. */
export type UpstreamOptions = { [Name in DialectName]: UpstreamOptionsOf<Name> }[DialectName]

/** A Vertex AI upstream: Gemini and Claude models with an OAuth token (see docs/guides/vertex.md). */
export type VertexUpstreamOptions = WithCommon<VertexOptionFields>

/** An AWS Bedrock upstream: Claude by InvokeModel, other models by Converse (see docs/guides/bedrock.md). */
export type BedrockUpstreamOptions = WithCommon<BedrockOptionFields>

/** One key of an upstream's pool. */
export interface UpstreamKeyOptions {
  key: string
  /** Relative share of calls, a positive integer. @default 1 */
  weight?: number
  /** Its name in logs and usage events (letters, digits, `. _ -`). @default `key-<n>`, its position from 1 */
  alias?: string
}
