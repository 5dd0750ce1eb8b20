// Vertex AI as a format clients speak: Claude Code in Vertex mode and `@anthropic-ai/vertex-sdk` call
// `…/publishers/anthropic/models/{m}:rawPredict|:streamRawPredict` with a Messages body that names its model in the
// path, and `@google/genai` in Vertex mode calls `…/publishers/google/models/{m}:generateContent` with Gemini's. The
// project and location in the path are accepted and never used: the upstream's own configured ones are.
import type { IncomingHttpHeaders } from 'node:http'
import { invalidField as invalid, invariant } from '../../errors.js'
import { anthropic, messages, messagesCountTokens } from '../anthropic/index.js'
import type { CallTarget, Dialect, ModelRoute, OperationFormat, RequestBytes, SpokenBody } from '../dialect.js'
import { countTokens, gemini, generateContent } from '../gemini/index.js'
import { bearer } from '../shared.js'
import { splicedBody } from '../spoken-body.js'

/** `x-api-key` (Claude Code's `ANTHROPIC_CUSTOM_HEADERS`), then `x-goog-api-key`, then `Authorization: Bearer`. */
function clientKey(headers: IncomingHttpHeaders): string | undefined {
  for (const name of ['x-api-key', 'x-goog-api-key'] as const) {
    const header = headers[name]
    if (typeof header === 'string' && header.trim() !== '') return header.trim()
  }
  return bearer(headers.authorization)
}

/**
 * What both Vertex client variants share: the caller's key, and the gateway's own errors in Google's `google.rpc`
 * status shape, as Vertex AI's front answers them (an upstream's error on a passthrough call is relayed as it came,
 * as Vertex AI relays a Claude model's own Anthropic-shaped errors).
 */
const CLIENT_SIDE = {
  name: 'vertex',
  keyHint:
    '`x-api-key`, `x-goog-api-key` or `Authorization: Bearer <key>` (the Vertex clients cannot skip their Google auth: give them an auth client that adds no header)',
  clientKey,
  errorBody: gemini.errorBody,
  errorStatus: gemini.errorStatus,
  errorHeaders: undefined,
  routes: [],
  modelListPaths: undefined,
  pathPrefix: undefined,
  recognises: () => false,
} as const satisfies Partial<Dialect>

/** The Vertex client of a Claude model: Anthropic's Messages (its headers forwarded, its SSE) on Vertex's paths. */
export const vertexAnthropicClient: Dialect = { ...anthropic, ...CLIENT_SIDE, speaks: anthropic }

/** The Vertex client of a Gemini model (`@google/genai` with `vertexai: true`): Gemini's formats on Vertex's paths. */
export const vertexGeminiClient: Dialect = { ...gemini, ...CLIENT_SIDE, speaks: gemini }

/** Refuses an `anthropic_version` that is not a string (Vertex AI's is `vertex-2023-10-16`; it is not sent on). */
function checkVersion(fields: Record<string, unknown>): void {
  const version = fields.anthropic_version
  if (version !== undefined && typeof version !== 'string') invalid('anthropic_version', "'anthropic_version' must be a string.")
}

/** The body a Messages upstream takes: `model` (the configured one the path named) first, `anthropic_version` out. */
function spokenMessages(body: RequestBytes, added: Readonly<Record<string, string | boolean>>): SpokenBody {
  return { body: splicedBody(body, ['anthropic_version'], added), headers: {} }
}

/**
 * `POST …/publishers/anthropic/models/{model}:rawPredict` and `:streamRawPredict`: a Messages body without `model`,
 * with `anthropic_version`; the route says whether it streams. Recorded and hashed as sent; every upstream gets the
 * Messages body it stands for.
 */
export const vertexRawPredict: OperationFormat = {
  ...messages,
  operation: 'vertex.rawPredict',
  readFields: new Set([...messages.readFields, 'anthropic_version']),
  read(fields, fromPath): CallTarget {
    invariant(fromPath, 'a rawPredict call is routed with its model')
    if (fields.model !== undefined) invalid('model', "Vertex AI names the model in the path: leave 'model' out of a rawPredict body.")
    if (fields.stream !== undefined && fields.stream !== null && fields.stream !== fromPath.stream)
      invalid(
        'stream',
        fromPath.stream
          ? "':streamRawPredict' streams: 'stream' must be true or absent."
          : "'stream' is true: call ':streamRawPredict' to stream.",
      )
    checkVersion(fields)
    messages.read({ ...fields, model: fromPath.model, stream: fromPath.stream }, undefined)
    return fromPath
  },
  spokenBody: (body, target) => spokenMessages(body, { model: target.model, stream: target.stream }),
}

/**
 * `POST …/publishers/anthropic/models/count-tokens:rawPredict`: a Messages token count with `model` in the body, as
 * on Anthropic's own API, and `anthropic_version`. Free upstream, so never kept.
 */
export const vertexCountTokens: OperationFormat = {
  ...messagesCountTokens,
  operation: 'vertex.countTokens',
  readFields: new Set([...messagesCountTokens.readFields, 'anthropic_version']),
  read(fields, fromPath) {
    checkVersion(fields)
    return messagesCountTokens.read(fields, fromPath)
  },
  spokenBody: (body, target) => spokenMessages(body, { model: target.model }),
}

/** Where Vertex AI serves a project's models, after the API version. */
const PUBLISHERS = '/projects/{project}/locations/{location}/publishers'

/** How the 404's list names the `/v1` routes of one publisher: one entry each (`/v1beta1` serves the same paths). */
const LISTED = (publisher: string, methods: string) =>
  `POST /v1/projects/{p}/locations/{l}/publishers/${publisher}/models/{model}:${methods}`

/** One version's routes: `/v1` (the Anthropic Vertex SDK's, Claude Code's) and `/v1beta1` (`@google/genai`'s default). */
function routesOf(version: string): ModelRoute[] {
  const anthropicAt = `${version}${PUBLISHERS}/anthropic/models`
  const googleAt = `${version}${PUBLISHERS}/google/models`
  const first = version === '/v1'
  const claude = { dialect: vertexAnthropicClient, listed: false } as const
  const google = { dialect: vertexGeminiClient, listed: false } as const
  return [
    // Before `{model}:rawPredict`, which would read `count-tokens` as a model.
    { path: `${anthropicAt}/count-tokens:rawPredict`, format: vertexCountTokens, ...claude },
    {
      path: `${anthropicAt}/{model}:rawPredict`,
      format: vertexRawPredict,
      streams: false,
      ...claude,
      listed: first && LISTED('anthropic', '{rawPredict|streamRawPredict}'),
    },
    { path: `${anthropicAt}/{model}:streamRawPredict`, format: vertexRawPredict, streams: true, ...claude },
    {
      path: `${googleAt}/{model}:generateContent`,
      format: generateContent,
      streams: false,
      ...google,
      listed: first && LISTED('google', '{generateContent|streamGenerateContent?alt=sse}'),
    },
    { path: `${googleAt}/{model}:streamGenerateContent`, format: generateContent, streams: true, ...google },
    { path: `${googleAt}/{model}:countTokens`, format: countTokens, streams: false, ...google },
  ]
}

/** Every Vertex AI path clients call, under both API versions. */
export const VERTEX_CLIENT_ROUTES: readonly ModelRoute[] = [...routesOf('/v1'), ...routesOf('/v1beta1')]
