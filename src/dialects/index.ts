// The dialect registry: the one list of the wire formats the gateway speaks. The router, the translators, CORS's
// allowed headers and the OpenTelemetry operation names are derived from it here; nothing else lists dialects.
import { assembleStream, assembleStreamInSlices } from '../translate/assemble.js'
import type { CallPlan } from '../translate/format.js'
import { joinFormats, type Translator } from '../translate/index.js'
import type { Operation } from '../types.js'
import type { Dialect, ModelRoute, OperationFormat, RateLimitFamily, UpstreamApi, UpstreamOptionValues } from './dialect.js'
import type { DialectName } from './names.js'
import { REGISTERED_DIALECTS } from './registered.js'

/** Every dialect, in the registry's order (`registered.ts`, the one list). */
export const DIALECTS: readonly Dialect[] = REGISTERED_DIALECTS

/** Every dialect name, in the registry's order: the `type`s an upstream may have. */
export const DIALECT_NAMES: readonly DialectName[] = DIALECTS.map((dialect) => dialect.name)

const BY_NAME: ReadonlyMap<string, Dialect> = new Map(DIALECTS.map((dialect) => [dialect.name, dialect]))

/** The dialect of a path no dialect claims, and of a client that does not say it speaks another: the first. */
export const DEFAULT_DIALECT: Dialect = DIALECTS[0] as Dialect

/** The dialect of a configured upstream `type`, or undefined when there is none by that name. */
export function dialectNamed(name: unknown): Dialect | undefined {
  return typeof name === 'string' ? BY_NAME.get(name) : undefined
}

/**
 * Whether a client of `client` reaches an upstream of `upstream` passthrough: both speak one dialect's formats, each
 * on its own paths and credentials (`speaks`: Azure's upstreams, Bedrock's InvokeModel clients).
 */
export function speaksAs(client: Dialect, upstream: Dialect): boolean {
  return (client.speaks ?? client) === (upstream.speaks ?? upstream)
}

/** A model-call route with the dialect that serves it. */
export interface RegisteredRoute extends ModelRoute {
  readonly dialect: Dialect
}

/** Every model-call route of every dialect, each with the variant that serves it (its `dialect`, else the listing one). */
export const MODEL_ROUTES: readonly RegisteredRoute[] = DIALECTS.flatMap((dialect) =>
  dialect.routes.map((route) => ({ ...route, dialect: route.dialect ?? dialect })),
)

/**
 * The operations a model whose upstream speaks `upstream` serves, whatever the client's dialect: every operation
 * of that dialect, and the other dialects' operations that are translated for it (never embeddings; token counts
 * only through the upstream's own counting method).
 */
export function servedOperations(upstream: Dialect): ReadonlySet<Operation> {
  const served = MODEL_ROUTES.filter(
    ({ dialect, format }) =>
      speaksAs(dialect, upstream) ||
      (format.counting
        ? upstream.countingApi !== undefined
        : format.untranslated === undefined && translatorFor(dialect, upstream, format.operation) !== undefined),
  )
  return new Set(served.map((route) => route.format.operation))
}

/** Each operation's format, by its name (operation names are unique across dialects). */
export const OPERATIONS: ReadonlyMap<Operation, OperationFormat> = new Map(
  MODEL_ROUTES.map((route) => [route.format.operation, route.format]),
)

/** `gen_ai.operation.name` of each operation. */
export const OTEL_OPERATION_NAMES: ReadonlyMap<Operation, string> = new Map(
  [...OPERATIONS].map(([name, format]) => [name, format.otelName]),
)

/** Every dialect a client may speak: the registry's, and the variants that serve some of their routes. */
const CLIENT_DIALECTS: readonly Dialect[] = [...new Set([...DIALECTS, ...MODEL_ROUTES.map((route) => route.dialect)])]

/** Request headers some dialect's SDKs send from a browser. */
export const CLIENT_HEADERS: readonly string[] = [...new Set(CLIENT_DIALECTS.flatMap((dialect) => dialect.clientHeaders))]

/** Response headers some dialect's SDKs read the request id from, besides `x-request-id`. */
export const REQUEST_ID_HEADERS: readonly string[] = [
  ...new Set(CLIENT_DIALECTS.flatMap((dialect) => (dialect.requestIdHeader === undefined ? [] : [dialect.requestIdHeader]))),
]

/** Every family of rate-limit headers the dialects' clients read, each once, in registry order. */
export const RATE_LIMIT_FAMILIES: readonly RateLimitFamily[] = [...new Set(CLIENT_DIALECTS.map((dialect) => dialect.rateLimits))]

/** Every rate-limit header name of those families (for CORS to expose). */
export const RATE_LIMIT_HEADERS: readonly string[] = RATE_LIMIT_FAMILIES.flatMap((family) => family.names)

/** The upstream options only some dialect's upstreams take (`anthropicVersion`), with the dialects that take each. */
export const DIALECT_UPSTREAM_OPTIONS: ReadonlyMap<string, readonly Dialect[]> = new Map(
  [...new Set(DIALECTS.flatMap((dialect) => Object.keys(dialect.upstreamOptions ?? {})))].map((name) => [
    name,
    DIALECTS.filter((dialect) => dialect.upstreamOptions?.[name] !== undefined),
  ]),
)

/** The API translated calls take to an upstream of `dialect` with these option values. */
export function upstreamApi(dialect: Dialect, options: UpstreamOptionValues = {}): UpstreamApi {
  return dialect.upstreamApiFor?.(options) ?? { format: dialect.upstreamFormat, operation: dialect.translatedOperation }
}

/**
 * The translator from a client's `operation` in its dialect to an upstream's dialect, written in the upstream's
 * `api` (its dialect's default unless its options pick another), or undefined when both dialects are the same
 * (passthrough) or the operation is passthrough only.
 */
export function translatorFor(inbound: Dialect, outbound: Dialect, operation: Operation, api?: UpstreamApi): Translator | undefined {
  if (speaksAs(inbound, outbound)) return undefined
  const format = OPERATIONS.get(operation)
  if (format?.hub) return joinFormats(format.hub, (api ?? upstreamApi(outbound)).format)
  // A count goes only to an upstream's own counting method: no other API of it can answer one.
  const counting = api ?? outbound.countingApi
  return format?.counting && counting ? joinFormats(format.counting, counting.format) : undefined
}

/**
 * A stream of a client's `operation` (the SSE `data` of its events) assembled into the answer that format gives
 * without streaming; undefined for an operation without a stream format, or a stream cut before its answer.
 */
export function assembledAnswer(operation: Operation, data: readonly string[], plan: CallPlan): object | undefined {
  const format = OPERATIONS.get(operation)?.hub
  if (!format) return undefined
  if (format.assembleStream) return format.assembleStream(data)
  // A format that is also its dialect's upstream format reads its own events.
  const reader = DIALECTS.find((dialect) => (dialect.upstreamFormat as object) === format)?.upstreamFormat
  return reader && assembleStream(reader, format, data, plan)
}

/**
 * `assembledAnswer` for a stream that may be large (a recovery record's): the events are read a slice at a time with
 * turns of the event loop between, by the format itself when it assembles its own stream.
 */
export async function assembledAnswerInSlices(operation: Operation, data: readonly string[], plan: CallPlan): Promise<object | undefined> {
  const format = OPERATIONS.get(operation)?.hub
  if (!format) return undefined
  if (format.assembleStreamInSlices) return format.assembleStreamInSlices(data)
  if (format.assembleStream) return format.assembleStream(data)
  const reader = DIALECTS.find((dialect) => (dialect.upstreamFormat as object) === format)?.upstreamFormat
  return reader && assembleStreamInSlices(reader, format, data, plan)
}

export { anthropic, messages, messagesCountTokens } from './anthropic/index.js'
export type {
  AnswerFacts,
  AskedUsage,
  BackgroundEnding,
  BackgroundFormat,
  BackgroundStatus,
  CallTarget,
  Dialect,
  DialectUpstreamOption,
  ErrorFacts,
  ListedModel,
  ModelRoute,
  OperationFormat,
  RateLimitFamily,
  RateLimitFigures,
  SpokenBody,
  UpstreamApi,
  UpstreamOptionValues,
} from './dialect.js'
export { batchEmbedContents, countTokens, embedContent, gemini, generateContent, googleStatus } from './gemini/index.js'
export type { DialectName } from './names.js'
export { chatCompletions, embeddings, openai, responses } from './openai/index.js'
export { MAX_CHOICES, MAX_REASON_LENGTH, reasonList } from './shared.js'
