import type { IncomingHttpHeaders } from 'node:http'
import type { HttpErrorCode } from '../errors.js'
import type { ClientFormat, UpstreamFormat } from '../translate/format.js'
import type { Operation, TokenCounts } from '../types.js'
import type { FramingReader, UpstreamAuthorizer, UpstreamErrorReader } from '../upstream/authorize.js'
import type { BackgroundFormat } from './background-format.js'
import type { ClientFraming } from './framing/framing.js'
import type { DialectName } from './names.js'
import type { RateLimitFamily } from './rate-limit-family.js'
import type { WebSocketFormat } from './websocket-format.js'

/** Which model a call is for and whether it streams, as the request said it (in its path or its body). */
export interface CallTarget {
  model: string
  stream: boolean
}

/** A request body as the gateway read it: its bytes, the top-level fields it read, and where they lie in a large body. */
export interface RequestBytes {
  bytes: Buffer
  fields: Record<string, unknown>
  /** The whole body, when it was parsed whole. */
  value: Record<string, unknown> | undefined
  spans: ReadonlyMap<string, readonly [number, number]> | undefined
}

/**
 * Usage a format's upstream streams report only when asked: the gateway asks on the client's behalf (every stream
 * is metered) and takes out of the stream what the client did not ask for.
 */
export interface AskedUsage {
  /** The request asking for usage in its stream; undefined when the client asked for it itself. */
  ask(body: RequestBytes): Buffer | undefined
  /** One event (with its blank line) as the client would have got it; undefined when it would not have got it at all. */
  strip(event: string): string | undefined
}

/** One operation of a dialect, as a client asks for it. */
export interface OperationFormat {
  readonly operation: Operation
  /** `gen_ai.operation.name` in the OpenTelemetry GenAI conventions (a custom name where they have none). */
  readonly otelName: string
  /**
   * The operation's reader and writer through the hub, as the client's side of a translated call; absent for an
   * operation that is passthrough only (embeddings, token counts).
   */
  readonly hub?: ClientFormat
  /** Checks the query of a call (Gemini's `alt`) before its body is read; absent where the query means nothing. */
  checkQuery?(query: URLSearchParams, stream: boolean): void
  /** Whether the model name is a top-level body field (rewritten when the upstream knows the model by another name). */
  readonly modelInBody: boolean
  /**
   * The body text naming the model `to` where it named `from` besides the path (Gemini's embedding requests carry
   * `models/<id>`), every other byte kept; absent for formats that name it only in the path or in `model`.
   */
  renameInBody?(text: string, from: string, to: string): string
  /**
   * Whether an answer its client did not take is kept as a recovery record. Token counts are not: they are free
   * upstream, so the client simply asks again.
   */
  readonly keepsRecords: boolean
  /**
   * Whether it counts a request's tokens (free upstream, and some clients, Claude Code, call it on every turn): its
   * calls count against no owner's limits. @default false
   */
  readonly countsTokens?: boolean
  /**
   * What this operation's calls are, for an operation never translated between formats (`embeddings`, `token
   * counts`): a model whose upstream speaks another format is the client's 400, which says so. Absent where such
   * calls are translated (chat, generate-content).
   */
  readonly untranslated?: string
  /**
   * A token count's reader and writer as the client's side of a call translated through the upstream dialect's
   * `countingApi` (refused as `untranslated` where it has none); absent for other operations.
   */
  readonly counting?: ClientFormat
  /** Top-level fields the gateway reads or checks: each may appear once, or the gateway and the upstream could read different ones. */
  readonly readFields: ReadonlySet<string>
  /**
   * Members of the object elements of top-level arrays whose type `read` checks (`messages[i].role`): in a large
   * body these elements are summed up by these members alone (see `scanJsonBody`). @default none
   */
  readonly elementFields?: readonly string[]
  /**
   * Checks a request body and returns the call's target. `fromPath` is what the route read from the URL, for
   * formats that put the model there (generate-content); formats that put it in the body ignore it.
   */
  read(fields: Record<string, unknown>, fromPath: CallTarget | undefined): CallTarget
  /**
   * The event that ends one of its streams early (broken off upstream, or cancelled), whole: the event its clients'
   * SDKs raise or yield as an error. `eventsBefore` is how many events the client got before it. @default a `data:`
   * event with the dialect's error body
   */
  streamErrorEvent?(error: ErrorFacts, eventsBefore: number): string
  /** Present where the upstream's streams report usage only when asked (chat completions). @default absent */
  readonly askedUsage?: AskedUsage
  /** How its streams are framed for the client. @default Server-Sent Events (`sse`) */
  readonly framing?: ClientFraming
  /** Whether `streamErrorEvent` reads `eventsBefore`: only then are a stream's events counted as they are relayed. @default false */
  readonly countsStreamEvents?: boolean
  /**
   * For an operation whose body is the format of the dialect its route's dialect `speaks` with members of its own
   * transport (Bedrock's InvokeModel: Messages without `model` and `stream`, with `anthropic_version` and
   * `anthropic_beta`): that format's body, the path's `target` written in, and the request headers of that dialect
   * the body carried (`anthropic-beta`, joined with the client's own of that name in `headers`). Every later stage
   * sees only the spoken body; the record and the body hash keep the one the client sent. @default the body as it came
   */
  spokenBody?(body: RequestBytes, target: CallTarget, headers: IncomingHttpHeaders): SpokenBody
}

/** An upstream's error answer rewritten for a client variant (`Dialect.relayedError`). */
export interface RelayedError {
  status: number
  body: Buffer
  headers: Readonly<Record<string, string>>
}

/** A client's body as the dialect its route speaks takes it (`OperationFormat.spokenBody`). */
export interface SpokenBody {
  body: RequestBytes
  /** Request headers of the spoken dialect the body carried, standing in for the client's own of that name. */
  headers: Readonly<Record<string, string>>
}

/**
 * A stream's token counts, read from its events newest first. A dialect may report input and output usage in
 * different events and repeat cumulative counts (Anthropic: `message_start`, then `message_delta`): what a later
 * event says stands, so the reader keeps what it saw first and is `complete` once no older event can change it.
 */
export interface StreamUsageReader {
  /** Takes one parsed event, newest first. */
  event(event: unknown): void
  /** True once no older event can change the counts: the gateway stops reading there. */
  readonly complete: boolean
  /** The counts read, or undefined when no event carried any. */
  usage(): TokenCounts | undefined
}

/** What `call:end` reports of a completed answer, read from its bytes. */
export interface AnswerFacts {
  usage: TokenCounts | undefined
  /** Why each choice stopped, in choice order, in the upstream's own words; undefined when the answer said none. */
  finishReasons: string[] | undefined
}

/** An error as a dialect renders it. */
export interface ErrorFacts {
  status: number
  code: HttpErrorCode
  message: string
  param: string | undefined
  /** The gateway's request id, for a dialect whose error bodies carry it (Anthropic's `request_id`). */
  requestId?: string
}

/**
 * An upstream option only upstreams of one dialect take: checked once, and sent as a header (`anthropicVersion`) or
 * read by the dialect to pick the API translated calls take (`api`).
 */
export interface DialectUpstreamOption {
  /** The request header that carries the option's value upstream; absent for an option no call carries. @default none */
  readonly header?: string
  /** The value sent when the upstream does not set the option. */
  readonly default: string
  /** Why a configured value cannot be sent, or undefined when it can. */
  problem(value: unknown): string | undefined
}

/** The values of an upstream's dialect options (`upstreamOptions`), each the configured one or its default. */
export type UpstreamOptionValues = Readonly<Record<string, string>>

/** How a translated call reaches an upstream: the format it is written in and the operation it becomes upstream. */
export interface UpstreamApi {
  readonly format: UpstreamFormat
  readonly operation: Operation
}

/** What a model listing shows of one configured model. */
export interface ListedModel {
  id: string
  created: number
  /** The release time configured, Unix seconds; undefined where unknown (`created` is then the gateway's start). */
  released: number | undefined
  ownedBy: string
  /** The context window in tokens (`contextWindow`); undefined: not known. */
  contextWindow: number | undefined
  /** The largest output token limit (`maxOutputTokens`); undefined: not known. */
  maxOutputTokens: number | undefined
  /** What a client can ask of the model: its upstream dialect's operations, and those translated for that dialect. */
  operations: ReadonlySet<Operation>
}

/**
 * One path a dialect serves model calls on (POST), as a route pattern: fixed (`/v1/chat/completions`), or with named
 * parameters in braces (`/model/{model}/invoke`). A parameter holds one or more characters up to the first occurrence
 * of the character that follows it in the pattern (so a model id may hold `.`, `:` or `/` where the pattern goes on
 * with another); the parameter `model` names the call's model.
 */
export interface ModelRoute {
  readonly path: string
  readonly format: OperationFormat
  /** Whether the path itself says the call streams (`:streamGenerateContent`); absent: the body's `stream` says. */
  readonly streams?: boolean
  /** How the 404 for an unknown path names this route; `false` for an alias of a listed one (Gemini under `/v1`). */
  readonly listed?: string | false
  /**
   * Background calls of this route, when its clients can ask for them: they are then served by id at `{path}/{id}`
   * (GET: its state or, with `?stream=true`, its events; DELETE) and `{path}/{id}/cancel` (POST). @default none
   */
  readonly background?: BackgroundFormat
  /** Its WebSocket mode: `GET {path}` with `Upgrade: websocket`, served through `upgradeHandler`. @default none */
  readonly websocket?: WebSocketFormat
  /**
   * The variant of the listing dialect that serves this route, where its routes speak different formats (Bedrock's
   * InvokeModel takes Anthropic's Messages, Converse its own): its key, errors and `speaks`. @default the listing dialect
   */
  readonly dialect?: Dialect
}

/** Everything that differs between two wire formats (named `Name`). Nothing outside `src/dialects/` compares dialect names. */
export interface Dialect<Name extends DialectName = DialectName> {
  readonly name: Name
  /**
   * The dialect whose wire formats this one's upstreams speak, for an upstream-only dialect that differs from it in
   * transport alone (Azure OpenAI: OpenAI's formats on Azure's paths and credentials): that dialect's clients reach
   * its upstreams passthrough, as they would one of their own. @default this dialect
   */
  readonly speaks?: Dialect
  /** How messages name this dialect's upstreams: `Anthropic` for "an Anthropic upstream". */
  readonly upstreamsCalled: string
  /** The model calls this dialect's clients make: the router, the 404's list and the client's path pattern derive from them. */
  readonly routes: readonly ModelRoute[]
  /**
   * Where its clients list the models (`GET {path}`) and read one (`GET {path}/{id}`): a path several dialects list
   * (`/v1/models`) answers the one whose client the headers announce. @default none
   */
  readonly modelListPaths?: readonly string[]
  /** How the 401 for a call without a key tells this dialect's clients where to send one (`Authorization: Bearer <key>`). */
  readonly keyHint: string
  /** How a client the gateway writes itself (the console's page) sends a key: header `name`, value `prefix` + key. */
  readonly keyHeader?: { readonly name: string; readonly prefix: string }
  /** The `accept` an upstream of this dialect is asked to stream with. @default the SSE content type */
  readonly upstreamStreamAccept?: string
  /** A path prefix every path under which speaks this dialect (`/v1beta`); elsewhere a shared path goes by `recognises`. */
  readonly pathPrefix?: string
  /** Request headers this dialect's SDKs send from a browser: CORS allows them. */
  readonly clientHeaders: readonly string[]
  /**
   * Request headers of this dialect's clients that an upstream of the same dialect gets as they came (Anthropic's
   * `anthropic-version` and `anthropic-beta`): a passthrough call asks the upstream for what its client asked. A
   * translated call sends the upstream's configured `upstreamOptions` instead. @default none
   */
  readonly forwardedHeaders?: readonly string[]
  /** Options of an upstream of this dialect that no other dialect takes, by option name. @default none */
  readonly upstreamOptions?: Readonly<Record<string, DialectUpstreamOption>>
  /** The response header this dialect's SDKs read the request id from, beside `x-request-id` (`request-id`). @default none */
  readonly requestIdHeader?: string
  /**
   * The dialect's API sends `retry-after` with every 429 (Anthropic's): an upstream's 429 reaches its clients with one
   * though the upstream sent none (of another dialect, whose API does not). @default false
   */
  readonly retryAfterOn429?: boolean
  /** The wait in ms an error body of this dialect asks for, where its API says it there (Google's `RetryInfo`). @default none */
  errorRetryAfterMs?(body: Buffer): number | undefined
  /**
   * The rate-limit headers this dialect's SDKs read, sent on answers under owner limits (a family may serve several
   * dialects: Gemini's clients get OpenAI's, as Google sends none).
   */
  readonly rateLimits: RateLimitFamily
  /** How a translated call is written for an upstream of this dialect, and its answers read back into the hub. */
  readonly upstreamFormat: UpstreamFormat
  /** The operation a translated call is to an upstream of this dialect (what `upstreamFormat` writes). */
  readonly translatedOperation: Operation
  /**
   * The API a translated call takes to an upstream whose dialect options are `options`, for a dialect whose
   * upstreams serve more than one (OpenAI's `api: 'responses'`). @default `upstreamFormat` as `translatedOperation`
   */
  upstreamApiFor?(options: UpstreamOptionValues): UpstreamApi
  /** The API a translated token count takes to an upstream of this dialect; absent where it has none (a 400). */
  readonly countingApi?: UpstreamApi
  /** The provider's name in the OpenTelemetry GenAI conventions (`gen_ai.provider.name`). */
  readonly otelProviderName: string
  /** The API key a client of this format presents. */
  clientKey(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined
  /** Whether a request's headers say its client speaks this format (on paths both formats share, like `/v1/models`). */
  recognises(headers: IncomingHttpHeaders): boolean
  /** The model list as a client of this format expects it. */
  modelList(models: readonly ListedModel[]): unknown
  /** One model as a client of this format expects it. */
  modelObject(model: ListedModel): unknown
  /** The error body a client of this format understands. */
  errorBody(error: ErrorFacts): unknown
  /** Headers its clients read an error's kind from, sent with its error body (Bedrock's `x-amzn-errortype`). @default none */
  errorHeaders?(error: ErrorFacts): Readonly<Record<string, string>>
  /**
   * An upstream's error answer as this dialect's clients take it, for a client variant whose route speaks another
   * dialect's format (Bedrock's InvokeModel clients get `{ message }` and `x-amzn-errortype` for an Anthropic error
   * body): `body` is in the spoken format, passthrough or translated. @default the answer as it is
   */
  relayedError?(status: number, body: Buffer): RelayedError
  /**
   * The HTTP status an error of `status` is answered with, for a format whose error bodies name their status and
   * allow only some (Google's: those google.rpc.Code maps to); absent: `status` itself.
   */
  errorStatus?(status: number): number
  /**
   * One event of a resumable stream with its number `id` (an `id:` field): placed where this format's clients still
   * read the event as they would without it.
   */
  numberedEvent(event: Buffer, id: number): Buffer
  /** Token counts of a response object of this format, or undefined when it carries none. */
  usage(response: unknown): TokenCounts | undefined
  /** The top-level field of a response that holds its usage (read from a large body's tail alone). */
  readonly usageField: string
  /** A fresh reader of one stream's usage, fed its events newest first. */
  streamUsage(): StreamUsageReader
  /**
   * Writes why each choice (candidate) of a response object or stream chunk of this format stopped into `reasons`,
   * at the choice's index, in the provider's own words (`stop`, `STOP`, …); choices that say nothing are left alone.
   */
  finishReasons(response: unknown, reasons: string[]): void
  /** The member of a choice that says why it stopped (searched for in a large body's tail, or a stream event). */
  readonly finishReasonField: string
  /** A configured `baseUrl` path, normalised (without a trailing slash). */
  upstreamBasePath(pathname: string): string
  /**
   * The base path meant when a configured `baseUrl` path goes on into the path of a call (which the gateway adds
   * itself, so every call would miss), or undefined when the path may be right.
   */
  intendedBasePath(pathname: string): string | undefined
  /**
   * The base path likely meant when a configured `baseUrl` path may be right but usually is not (OpenAI's without
   * `/v1`, where every call gets the upstream's 404): warned of at construction and on an upstream 404. @default none
   */
  doubtfulBasePath?(pathname: string): string | undefined
  /** Why a configured `upstreamModel` cannot be sent to this format, or undefined when it can. */
  upstreamModelProblem(name: string): string | undefined
  /**
   * Path of an upstream call below the base path (with its query, if any); `options` are the upstream's
   * `upstreamOptions` values. A function of its arguments: the gateway makes it once per model, operation and stream.
   */
  upstreamPath(basePath: string, upstreamModel: string, operation: Operation, stream: boolean, options?: UpstreamOptionValues): string
  /** The headers that carry the gateway's own upstream key. */
  upstreamAuthHeaders(apiKey: string): Record<string, string>
  /**
   * Options an upstream of this dialect takes besides the common ones and `upstreamOptions` (Bedrock's `region` and
   * `credentials`): checked by `upstreamAuthorizer` and `baseUrlFrom`, which read them. @default none
   */
  readonly upstreamOptionNames?: readonly string[]
  /**
   * The base URL of an upstream configured without `baseUrl`, from its options (`region`, `project`…); absent:
   * `baseUrl` is required. Throws a construction error (`fail`) naming the option that is wrong. A dialect whose
   * paths start with its options (Vertex's `/v1/projects/{project}/locations/{location}`) also completes a configured
   * `baseUrl` (a host root) when `completesBaseUrl` is set.
   */
  baseUrlFrom?(name: string, raw: Readonly<Record<string, unknown>>): string
  /** Whether `baseUrlFrom` is called with a configured `baseUrl` too, to complete it. @default false */
  readonly completesBaseUrl?: boolean
  /**
   * The authorizer of one upstream of this dialect, made once from its options (credentials, token providers), or
   * undefined when its calls carry static key headers alone. Throws a construction error for a bad option; loads
   * optional peers lazily. @default none
   */
  upstreamAuthorizer?(name: string, raw: Readonly<Record<string, unknown>>): UpstreamAuthorizer | undefined
  /**
   * How one of its upstream's streams of `operation` is read into SSE events, where the upstream frames streams
   * otherwise (an AWS event stream), with the upstream's dialect `options` (a frame size bound); undefined: already
   * SSE. @default none
   */
  upstreamFraming?(operation: Operation, options: UpstreamOptionValues): FramingReader | undefined
  /**
   * The dialect one model of an upstream of this type speaks, for an upstream type whose models take different APIs
   * (Bedrock: Anthropic models by InvokeModel with the Messages body, every other by Converse); undefined: this
   * dialect. Models of one upstream that speak the same dialect share one resolved upstream (its circuit and keys).
   * @default this dialect for every model
   */
  forModel?(upstreamModel: string): Dialect | undefined
  /**
   * A passthrough call's body as this dialect's upstream takes it, for one that `speaks` another with a body of its own
   * (Vertex AI's Claude: its `anthropic_version`, the model in the path only; Bedrock's: no `model`/`stream`, its
   * `anthropic_version`, the client's `anthropic-beta` as `anthropic_beta`, a token count wrapped as its CountTokens
   * takes it), made from the client's bytes once the model is renamed. A translated call's body is written so by
   * `upstreamFormat` (and `countingApi`) instead. `forwarded`: the client's headers of its dialect's
   * `forwardedHeaders`, flat; `operation`: the client's. @default the body as it came
   */
  passthroughBody?(body: Buffer, forwarded: readonly string[], operation: Operation): Buffer
  /**
   * A whole 2xx answer of a call of `operation` in the shape the dialect it `speaks` gives it, for an operation its
   * upstream answers in a shape of its own (Bedrock's CountTokens `{ inputTokens }` for a Messages token count's
   * `{ input_tokens }`): applied before any later stage reads it. @default the answer as it is
   */
  upstreamAnswer?(body: Buffer, operation: Operation): Buffer
  /** How this dialect's upstreams say what went wrong in their own terms (Bedrock's `x-amzn-errortype`). @default none */
  readonly upstreamErrors?: UpstreamErrorReader
}

export type { BackgroundEnding, BackgroundFormat, BackgroundStatus } from './background-format.js'
export type { RateLimitFamily, RateLimitFigures } from './rate-limit-family.js'
