import type { IncomingHttpHeaders } from 'node:http'
import {
  batchEmbedContents,
  type CallTarget,
  type Dialect,
  embedContent,
  embeddings,
  gemini,
  type OperationFormat,
  openai,
} from '../dialects/index.js'
import { shown } from '../errors.js'

/** What a request asks for, once its path and method are known. */
export type Route =
  | { kind: 'models' }
  | { kind: 'health' }
  | { kind: 'model'; id: string }
  | { kind: 'chat' }
  | { kind: 'responses' }
  | { kind: 'generateContent'; target: CallTarget }
  /** OpenAI's `/v1/embeddings` (the model in the body) or Gemini's embedding methods (the model in the path). */
  | { kind: 'embeddings'; format: OperationFormat; target: CallTarget | undefined }
  | { kind: 'countTokens'; target: CallTarget }
  | { kind: 'recoveries.list' }
  | { kind: 'recoveries.deleteAll' }
  | { kind: 'recoveries.lookup' }
  | { kind: 'recoveries.get'; requestId: string }
  | { kind: 'recoveries.delete'; requestId: string }
  | { kind: 'recoveries.stream'; requestId: string }
  | { kind: 'recoveries.cancel'; requestId: string }
  | { kind: 'method_not_allowed'; allow: string }
  | { kind: 'not_found' }

/** A matched request: the route, the dialect its path speaks (errors, keys) and the parsed query. */
export interface Match {
  route: Route
  dialect: Dialect
  query: URLSearchParams
  /** The query as sent, undecoded: destructive endpoints read their confirmation from it exactly. */
  rawQuery: string
}

// The Gemini methods on a model. `/v1` too: the Google GenAI SDK 3.x calls the stable version by default; both are
// served alike (upstream v1beta).
// The model segment is matched raw (never percent-decoded) and may hold `/` for configured ids such as
// `google/gemini-2.5-flash`; it only ever selects a configured model, so `..`, `%2F` or `%3A` simply name none.
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents|countTokens)$/

/** A model under `/v1/models/` or `/v1beta/models/` (a configured id may hold `/`; the method paths hold `:`). */
const MODEL_PATH = /^\/v1(?:beta)?\/models\/([^:]+)$/

/**
 * Google's format answers everything under `/v1beta` and the Gemini method paths under `/v1`; the model list
 * under `/v1` too when a Google client asks (the Google GenAI SDK 3.x lists `/v1/models`). OpenAI's the rest.
 */
function dialectOfPath(path: string, headers: IncomingHttpHeaders): Dialect {
  if (path === '/v1beta' || path.startsWith('/v1beta/')) return gemini
  if (path.startsWith('/v1/models/') && GEMINI_PATH.test(path)) return gemini
  if ((path === '/v1/models' || path.startsWith('/v1/models/')) && gemini.recognises(headers)) return gemini
  return openai
}

/** Every route at a mount, for a 404 that says what is served. */
const SERVED = [
  'POST /v1/chat/completions',
  'POST /v1/responses',
  'POST /v1beta/models/{model}:generateContent',
  'POST /v1beta/models/{model}:streamGenerateContent?alt=sse',
  'POST /v1/embeddings',
  'POST /v1beta/models/{model}:embedContent',
  'POST /v1beta/models/{model}:batchEmbedContents',
  'POST /v1beta/models/{model}:countTokens',
  'GET /v1/models',
  'GET /v1/health',
  'GET /v1/models/{model}',
  'GET /v1beta/models',
  'GET /v1beta/models/{model}',
  'GET|DELETE /v1/recoveries',
  'POST /v1/recoveries/lookup',
  'GET|DELETE /v1/recoveries/{request_id}',
  'GET /v1/recoveries/{request_id}/stream',
  'POST /v1/recoveries/{request_id}/cancel',
]

/** The message of a 404 for a path the gateway does not serve: the path, what is served, and the likely mistake. */
export function unknownPathMessage(method: string, path: string): string {
  let hint = ''
  if (routeOf(method, `/v1${path}`) || routeOf(method, `/v1beta${path}`)) hint = ' Is the base URL missing /v1?'
  else if (/^\/v1(?:beta)?\/v1(?:beta)?(?:\/|$)/.test(path)) hint = ' Does the base URL end in /v1 and the path start with it again?'
  return `Unknown path ${shown(path)}. This gateway serves ${SERVED.join(', ')}.${hint}`
}

function byMethod(method: string, allowed: Record<string, Route>): Route {
  return allowed[method] ?? { kind: 'method_not_allowed', allow: Object.keys(allowed).join(', ') }
}

// The fixed paths' routes, made once: matching is on every request's path, so it allocates as little as it can.
const MODELS: Record<string, Route> = { GET: { kind: 'models' } }
const CHAT: Record<string, Route> = { POST: { kind: 'chat' } }
const EMBEDDINGS: Record<string, Route> = { POST: { kind: 'embeddings', format: embeddings, target: undefined } }
const RESPONSES: Record<string, Route> = { POST: { kind: 'responses' } }
const RECOVERIES: Record<string, Route> = { GET: { kind: 'recoveries.list' }, DELETE: { kind: 'recoveries.deleteAll' } }
const LOOKUP: Route = { kind: 'recoveries.lookup' }
/** Shared by every match without a query: nothing downstream writes to a match's query. */
const NO_QUERY = new URLSearchParams()

/** The route of a Gemini method on a model, as `GEMINI_PATH` read them. */
function geminiRoute(method: string, model: string): Route {
  const target: CallTarget = { model, stream: method === 'streamGenerateContent' }
  switch (method) {
    case 'embedContent':
      return { kind: 'embeddings', format: embedContent, target }
    case 'batchEmbedContents':
      return { kind: 'embeddings', format: batchEmbedContents, target }
    case 'countTokens':
      return { kind: 'countTokens', target }
    default:
      return { kind: 'generateContent', target }
  }
}

function routeOf(method: string, path: string): Route | undefined {
  switch (path) {
    case '/v1/models':
    case '/v1beta/models':
      return byMethod(method, MODELS)
    case '/v1/health':
      return byMethod(method, { GET: { kind: 'health' } })
    case '/v1/chat/completions':
      return byMethod(method, CHAT)
    case '/v1/embeddings':
      return byMethod(method, EMBEDDINGS)
    case '/v1/responses':
      return byMethod(method, RESPONSES)
    case '/v1/recoveries':
      return byMethod(method, RECOVERIES)
    case '/v1/recoveries/lookup':
      if (method === 'POST') return LOOKUP
  }
  if (path.startsWith('/v1/recoveries/')) {
    // Kept raw (not percent-decoded): an id is 26 base32 characters, so anything else is simply not found.
    const rest = path.slice('/v1/recoveries/'.length)
    const slash = rest.indexOf('/')
    if (slash !== -1) {
      const requestId = rest.slice(0, slash)
      switch (rest.slice(slash)) {
        case '/stream':
          return byMethod(method, { GET: { kind: 'recoveries.stream', requestId } })
        case '/cancel':
          return byMethod(method, { POST: { kind: 'recoveries.cancel', requestId } })
      }
    }
    const requestId = rest
    return byMethod(method, {
      GET: { kind: 'recoveries.get', requestId },
      DELETE: { kind: 'recoveries.delete', requestId },
    })
  }
  const onModel = GEMINI_PATH.exec(path)
  if (onModel) return byMethod(method, { POST: geminiRoute(onModel[2] as string, onModel[1] as string) })
  // Only a read names a model resource; a POST there is a mistyped generate path (`%3A` for `:`), so unknown.
  const model = method === 'GET' ? MODEL_PATH.exec(path) : null
  if (model) {
    // SDKs percent-encode the id (`ft%3A…`, `google%2F…`); a malformed escape names no model.
    let id: string
    try {
      id = decodeURIComponent(model[1] as string)
    } catch {
      id = model[1] as string
    }
    return { kind: 'model', id }
  }
  return undefined
}

/**
 * Matches a request path (relative to where the gateway is mounted). Paths under `/v1/` or `/v1beta/`
 * that name nothing become `not_found` when `claimUnknown` is set, else undefined (left to the host).
 */
export function matchRequest(method: string, url: string, claimUnknown: boolean, headers: IncomingHttpHeaders = {}): Match | undefined {
  const mark = url.indexOf('?')
  const path = mark === -1 ? url : url.slice(0, mark)
  let route = routeOf(method, path)
  if (!route) {
    if (!claimUnknown) return undefined
    route = { kind: 'not_found' }
  }
  const rawQuery = mark === -1 ? '' : url.slice(mark + 1)
  return { route, dialect: dialectOfPath(path, headers), query: rawQuery === '' ? NO_QUERY : new URLSearchParams(rawQuery), rawQuery }
}

/** Normalises a mount prefix: no trailing slash, `''` for the root. */
export function normalisePrefix(prefix: string | undefined): string {
  return (prefix ?? '').replace(/\/+$/, '')
}

/** The URL relative to a normalised mount prefix (`'/'` at least), or undefined when it lies outside it. */
export function pathUnderPrefix(prefix: string, url: string): string | undefined {
  if (!prefix) return url
  if (!url.startsWith(prefix)) return undefined
  const rest = url.slice(prefix.length)
  if (rest === '') return '/'
  if (rest[0] === '?') return `/${rest}`
  return rest[0] === '/' ? rest : undefined
}
