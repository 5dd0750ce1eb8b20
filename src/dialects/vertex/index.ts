// Google Vertex AI as an upstream (`type: 'vertex'`): Gemini models in the Gemini format and Claude models in an
// Anthropic Messages variant, both under `/v1/projects/{project}/locations/{location}/publishers/…`, with an OAuth
// access token (or an express-mode API key). The formats are the gemini and anthropic dialects' own: the variants
// here change only paths, auth and a body field (in a client's body and in a translated one alike).
import type { UpstreamFormat } from '../../translate/format.js'
import type { Operation } from '../../types.js'
import { anthropic } from '../anthropic/index.js'
import type { Dialect } from '../dialect.js'
import { gemini } from '../gemini/index.js'
import { VERTEX_CLIENT_ROUTES } from './client.js'
import { serviceAccountOf, vertexAuthorizer } from './credentials.js'
import { VERTEX_OPTION_NAMES, vertexBaseUrl } from './options.js'

/** The API version Vertex AI's Claude models take, in the body (`anthropic_version`). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

/** Vertex AI in the OpenTelemetry GenAI conventions (`gen_ai.provider.name`). */
const PROVIDER = 'gcp.vertex_ai'

/** The method of each Gemini operation on a Vertex AI model. */
const GEMINI_METHODS: Partial<Record<Operation, string>> = {
  embedContent: 'embedContent',
  batchEmbedContents: 'batchEmbedContents',
  countTokens: 'countTokens',
}

/** Model ids as Vertex AI names them: Claude's carry a version after `@` (`claude-sonnet-4-5@20250929`). */
const modelProblem = (name: string) =>
  /^[\w.@-]+$/.test(name) ? undefined : 'must be a plain Vertex AI model id (letters, digits, . _ - @)'

/** A model id as a path segment: `@` kept, as Vertex AI documents its Claude ids' paths. */
const segment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@')

/** Token counts of Anthropic's format: its own clients' and Vertex clients' (`count-tokens:rawPredict`). */
const counts = (operation: Operation) => operation === 'messages.countTokens' || operation === 'vertex.countTokens'

/** The base path as `vertexBaseUrl` built it. */
const basePath = (pathname: string) => pathname.replace(/\/+$/, '')

/** Gemini models on Vertex AI: the Gemini format at `publishers/google/models/{m}:{method}`. */
const vertexGemini: Dialect = {
  ...gemini,
  speaks: gemini,
  otelProviderName: PROVIDER,
  upstreamsCalled: 'Vertex AI',
  upstreamBasePath: basePath,
  intendedBasePath: () => undefined,
  upstreamModelProblem: modelProblem,
  upstreamPath: (base, model, operation, stream) =>
    `${base}/publishers/google/models/${segment(model)}:${GEMINI_METHODS[operation] ?? (stream ? 'streamGenerateContent?alt=sse' : 'generateContent')}`,
}

/**
 * A Messages request as Vertex AI takes it: `anthropic_version` first (a client's own is kept), the model named only
 * in the path (a token count, whose path names no model, keeps it).
 */
function vertexMessages(request: object, count: boolean): object {
  const { model, anthropic_version: version, ...rest } = request as Record<string, unknown>
  const named = count && model !== undefined ? { model } : {}
  return { anthropic_version: version ?? VERTEX_ANTHROPIC_VERSION, ...named, ...rest }
}

/** A client's Messages body as Vertex AI takes it (see `vertexMessages`). The body was checked as JSON on the way in. */
export function vertexAnthropicBody(body: Buffer, operation: Operation): Buffer {
  let value: unknown
  try {
    value = JSON.parse(body.toString('utf8'))
  } catch {
    return body
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return body
  return Buffer.from(JSON.stringify(vertexMessages(value, counts(operation))))
}

/** An upstream format whose requests are `format`'s, as Vertex AI takes them. */
function onVertex(format: UpstreamFormat, count: boolean): UpstreamFormat {
  return { ...format, requestFromHub: (hub, plan) => vertexMessages(format.requestFromHub(hub, plan), count) }
}

/** Claude models on Vertex AI: Anthropic's Messages at `publishers/anthropic/models/{m}:rawPredict` / `:streamRawPredict`. */
const vertexAnthropic: Dialect = {
  ...anthropic,
  speaks: anthropic,
  otelProviderName: PROVIDER,
  upstreamsCalled: 'Vertex AI',
  // The API version goes in the body; betas stay in `anthropic-beta`, as Vertex AI reads them.
  upstreamOptions: undefined,
  upstreamBasePath: basePath,
  intendedBasePath: () => undefined,
  upstreamModelProblem: modelProblem,
  upstreamPath: (base, model, operation, stream) =>
    counts(operation)
      ? `${base}/publishers/anthropic/models/count-tokens:rawPredict`
      : `${base}/publishers/anthropic/models/${segment(model)}:${stream ? 'streamRawPredict' : 'rawPredict'}`,
  passthroughBody: (body, _forwarded, operation) => vertexAnthropicBody(body, operation),
  // A translated call's body is written as Vertex AI takes it, as a client's is made so above.
  upstreamFormat: onVertex(anthropic.upstreamFormat, false),
  countingApi: anthropic.countingApi && { ...anthropic.countingApi, format: onVertex(anthropic.countingApi.format, true) },
}

/**
 * Vertex AI as a configured upstream `type`. Each model speaks its publisher's format (`forModel`): Claude models
 * (ids starting `claude`) Anthropic's, every other Gemini's. Its clients' side is Vertex AI's paths (client.ts), served
 * by variants that speak Anthropic's and Gemini's formats.
 */
export const vertex: Dialect<'vertex'> = {
  ...vertexGemini,
  speaks: undefined,
  name: 'vertex',
  routes: VERTEX_CLIENT_ROUTES,
  pathPrefix: undefined,
  clientHeaders: [],
  // A Claude model's client betas go upstream as they came.
  forwardedHeaders: ['anthropic-beta'],
  recognises: () => false,
  upstreamOptionNames: VERTEX_OPTION_NAMES,
  completesBaseUrl: true,
  baseUrlFrom: (name, raw) => vertexBaseUrl(name, raw, serviceAccountOf(name, raw)?.projectId),
  upstreamAuthorizer: vertexAuthorizer,
  // Express mode: the API key Google issues for Vertex AI, in the header its SDK sends it in.
  upstreamAuthHeaders: (apiKey) => ({ 'x-goog-api-key': apiKey }),
  forModel: (upstreamModel) => (upstreamModel.startsWith('claude') ? vertexAnthropic : vertexGemini),
}

export type { VertexCredentials, VertexOptionFields, VertexToken } from './types.js'
