import type { IncomingHttpHeaders } from 'node:http'
import type { Operation, TokenCounts } from '../../types.js'
import type { Dialect, ListedModel, ModelRoute, OperationFormat } from '../dialect.js'
import { openaiRateLimits } from '../openai/rate-limits.js'
import { bearer, choiceReasons, newestUsage, tokenCount, tokenCounts } from '../shared.js'
import { countTokensFormat } from './generate-content/count.js'
import { generateContentFormat } from './generate-content/index.js'
import { batchEmbedContents, countTokens, embedContent, generateContent } from './operations.js'
import { googleStatus, retryInfoMs } from './status.js'

/** `x-goog-api-key` (what the Google GenAI SDK sends), then `?key=`, then `Authorization: Bearer`. */
function clientKey(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined {
  const header = headers['x-goog-api-key']
  if (typeof header === 'string' && header.trim() !== '') return header.trim()
  const fromQuery = query.get('key')
  if (fromQuery) return fromQuery
  return bearer(headers.authorization)
}

/**
 * Google's model resource: `name` is `models/<id>`, which the Google SDKs strip back to the id. Its methods are the
 * routes on a model whose operation the model serves: all of them on a Gemini upstream's, generate-content alone
 * (translated) on another's.
 */
function modelObject(model: ListedModel) {
  return {
    name: `models/${model.id}`,
    baseModelId: model.id,
    version: '001',
    displayName: model.id,
    description: `Served by model-gateway (${model.ownedBy}).`,
    ...(model.contextWindow === undefined ? {} : { inputTokenLimit: model.contextWindow }),
    ...(model.maxOutputTokens === undefined ? {} : { outputTokenLimit: model.maxOutputTokens }),
    supportedGenerationMethods: METHODS_ON_A_MODEL.filter(([, format]) => model.operations.has(format.operation)).map(([method]) => method),
  }
}

/** The method of each operation a Gemini upstream serves besides generate-content (what chat calls are translated to). */
const METHODS: Partial<Record<Operation, string>> = {
  embedContent: 'embedContent',
  batchEmbedContents: 'batchEmbedContents',
  countTokens: 'countTokens',
}

/** Token counts of a generate-content answer or stream chunk: tool-use prompt tokens are input, thoughts output. */
function usage(response: unknown): TokenCounts | undefined {
  if (typeof response !== 'object' || response === null) return undefined
  const meta = (response as { usageMetadata?: Record<string, unknown> | null }).usageMetadata
  if (typeof meta !== 'object' || meta === null) return undefined
  // Tool-use prompt tokens are billed as input and thoughts as output.
  const input = tokenCount(meta.promptTokenCount) + tokenCount(meta.toolUsePromptTokenCount)
  const reasoning = tokenCount(meta.thoughtsTokenCount)
  const output = tokenCount(meta.candidatesTokenCount) + reasoning
  return tokenCounts(input, output, tokenCount(meta.cachedContentTokenCount), 0, reasoning)
}

/** Each method on a model, by the name its path ends in. */
const METHODS_ON_A_MODEL: ReadonlyArray<[method: string, format: OperationFormat, streams: boolean, listed: string]> = [
  ['generateContent', generateContent, false, ':generateContent'],
  ['streamGenerateContent', generateContent, true, ':streamGenerateContent?alt=sse'],
  ['embedContent', embedContent, false, ':embedContent'],
  ['batchEmbedContents', batchEmbedContents, false, ':batchEmbedContents'],
  ['countTokens', countTokens, false, ':countTokens'],
]

/**
 * The methods under `/v1beta`, and under `/v1` too: the Google GenAI SDK 3.x calls the stable version by default, and
 * both are served alike (upstream v1beta).
 */
const ROUTES: ModelRoute[] = ['/v1beta', '/v1'].flatMap((version) =>
  METHODS_ON_A_MODEL.map(([method, format, streams, listed]) => ({
    path: `${version}/models/{model}:${method}`,
    format,
    streams,
    listed: version === '/v1beta' ? `POST /v1beta/models/{model}${listed}` : false,
  })),
)

/** The Gemini wire format: generate-content, `x-goog-api-key`, `{ error: { code, message, status } }`. */
export const gemini: Dialect<'gemini'> = {
  name: 'gemini',
  upstreamsCalled: 'Gemini',
  routes: ROUTES,
  pathPrefix: '/v1beta',
  modelListPaths: ['/v1beta/models'],
  keyHint: '`x-goog-api-key`, `?key=` or `Authorization: Bearer <key>`',
  clientHeaders: ['x-goog-api-key', 'x-goog-api-client'],
  upstreamFormat: generateContentFormat,
  translatedOperation: 'generateContent',
  countingApi: { format: countTokensFormat, operation: 'countTokens' },
  otelProviderName: 'gcp.gemini',
  rateLimits: openaiRateLimits,
  clientKey,
  // The Google GenAI SDKs send their key in `x-goog-api-key` and announce themselves in `x-goog-api-client`.
  recognises: (headers) => headers['x-goog-api-key'] !== undefined || headers['x-goog-api-client'] !== undefined,
  modelList: (models) => ({ models: models.map(modelObject) }),
  modelObject,
  errorBody: ({ status, message }) => {
    const google = googleStatus(status)
    return { error: { code: google.code, message, status: google.status } }
  },
  errorStatus: (status) => googleStatus(status).code,
  errorRetryAfterMs: retryInfoMs,
  // An event of its own after the data: the Google GenAI SDK skips events that do not begin with `data:` and reads
  // the rest of a data event as JSON, so an id line inside the event would hide or break it.
  numberedEvent: (event, id) => Buffer.concat([event, Buffer.from(`id: ${id}\n\n`)]),
  usageField: 'usageMetadata',
  usage,
  streamUsage: newestUsage(usage),
  finishReasonField: 'finishReason',
  finishReasons(response, reasons) {
    if (typeof response === 'object' && response !== null) {
      choiceReasons((response as { candidates?: unknown }).candidates, 'finishReason', reasons)
    }
  },
  // Google documents its base URL with `/v1beta`; the gateway adds the version itself, so a copied URL still works.
  upstreamBasePath: (pathname) => pathname.replace(/\/+$/, '').replace(/\/v1beta$/, ''),
  // A base URL copied from a call (`…/v1beta/models/gemini-2.5-flash:generateContent`): the host is what is meant.
  intendedBasePath: (pathname) => {
    const path = pathname.replace(/\/+$/, '')
    return /^(.*?)\/v1(?:beta|alpha)?\/models(?:[/:].*)?$/.exec(path)?.[1] ?? (/:[A-Za-z]+$/.test(path) ? '' : undefined)
  },
  upstreamModelProblem: (name) => (/^[\w.-]+$/.test(name) ? undefined : 'must be a plain Gemini model name'),
  upstreamPath: (basePath, upstreamModel, operation, stream) =>
    `${basePath}/v1beta/models/${encodeURIComponent(upstreamModel)}:${METHODS[operation] ?? (stream ? 'streamGenerateContent?alt=sse' : 'generateContent')}`,
  upstreamAuthHeaders: (apiKey) => ({ 'x-goog-api-key': apiKey }),
}

export { batchEmbedContents, countTokens, embedContent, generateContent } from './operations.js'
export { googleStatus } from './status.js'
export { validateGeminiAlt } from './validate.js'
