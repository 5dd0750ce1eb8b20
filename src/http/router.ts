import type { IncomingHttpHeaders } from 'node:http'
import {
  type BackgroundFormat,
  type CallTarget,
  DEFAULT_DIALECT,
  DIALECTS,
  type Dialect,
  MODEL_ROUTES,
  type RegisteredRoute,
} from '../dialects/index.js'
import { shown } from '../errors.js'

/** What a request asks for, once its path and method are known. */
export type Route =
  | { kind: 'models' }
  | { kind: 'health' }
  | { kind: 'model'; id: string }
  /** A model call of a dialect; `target` is what its path says (the model and streaming), when it says it. */
  | { kind: 'call'; route: RegisteredRoute; target: CallTarget | undefined }
  | { kind: 'recoveries.list' }
  | { kind: 'recoveries.deleteAll' }
  | { kind: 'recoveries.lookup' }
  | { kind: 'recoveries.get'; requestId: string }
  | { kind: 'recoveries.delete'; requestId: string }
  | { kind: 'recoveries.stream'; requestId: string }
  | { kind: 'recoveries.cancel'; requestId: string }
  /** A background call by its id (`GET|DELETE {path}/{id}`, `POST {path}/{id}/cancel`), in the dialect of its route. */
  | { kind: 'background'; action: 'retrieve' | 'cancel' | 'delete'; id: string; format: BackgroundFormat; dialect: Dialect }
  /** A path served for other methods; `dialect` is a model call's, whose errors it speaks. */
  | { kind: 'method_not_allowed'; allow: string; dialect?: Dialect }
  | { kind: 'not_found' }

/** A matched request: the route, the dialect its path speaks (errors, keys) and the parsed query. */
export interface Match {
  route: Route
  dialect: Dialect
  query: URLSearchParams
  /** The query as sent, undecoded: destructive endpoints read their confirmation from it exactly. */
  rawQuery: string
}

/**
 * The dialect a request speaks: a model call's own, else the one whose prefix the path is under (`/v1beta`), else,
 * on the model list shared by every dialect, a stream's resume and paths not served, the one whose client the headers
 * announce; the default otherwise.
 */
function dialectOfPath(path: string, headers: IncomingHttpHeaders, route: Route): Dialect {
  if (route.kind === 'call') return route.route.dialect
  if (route.kind === 'background') return route.dialect
  if (route.kind === 'method_not_allowed' && route.dialect) return route.dialect
  for (const dialect of DIALECTS) {
    const prefix = dialect.pathPrefix
    if (prefix !== undefined && (path === prefix || path.startsWith(`${prefix}/`))) return dialect
  }
  // The model list, shared by every dialect, a path the gateway does not serve (an SDK's call of an API it does not
  // offer) and a stream resumed (read by the SDK that read the call's stream) answer the client in the dialect its
  // headers announce.
  if (route.kind === 'not_found' || route.kind === 'recoveries.stream' || path === '/v1/models' || path.startsWith('/v1/models/')) {
    for (const dialect of DIALECTS) if (dialect !== DEFAULT_DIALECT && dialect.recognises(headers)) return dialect
  }
  return DEFAULT_DIALECT
}

/** A model route whose path names the model: what comes before `{model}` and what follows it. */
interface ModelSegment {
  before: string
  after: string
  route: RegisteredRoute
}

// The route table of model calls, from the dialect registry: fixed paths by path, and paths that name the model;
// and the paths below the routes whose calls may run in the background, where those calls are served by id.
const FIXED_CALLS = new Map<string, { POST: Route }>()
const CALLS_ON_A_MODEL: ModelSegment[] = []
const BACKGROUND_CALLS: Array<{ prefix: string; format: BackgroundFormat; dialect: Dialect }> = []
for (const route of MODEL_ROUTES) {
  if (route.background) BACKGROUND_CALLS.push({ prefix: `${route.path}/`, format: route.background, dialect: route.dialect })
  const at = route.path.indexOf('{model}')
  if (at === -1) FIXED_CALLS.set(route.path, { POST: { kind: 'call', route, target: undefined } })
  else CALLS_ON_A_MODEL.push({ before: route.path.slice(0, at), after: route.path.slice(at + '{model}'.length), route })
}

/** Every route at a mount, for a 404 that says what is served: the dialects' model calls, then the gateway's own. */
const SERVED = [
  ...MODEL_ROUTES.flatMap((route) => (route.listed === false ? [] : [route.listed ?? `POST ${route.path}`])),
  ...MODEL_ROUTES.flatMap((route) => (route.background ? [`GET|DELETE ${route.path}/{id}`, `POST ${route.path}/{id}/cancel`] : [])),
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

/**
 * The first two segments of every served path (`/v1/chat`, `/v1beta/models`, `/v1/recoveries`) and the dialects'
 * own prefixes (`/v1beta`): a path under one of them that names nothing is a mistyped call of the gateway's, answered
 * with its 404 and hint even where the host has the last word on other paths.
 */
const OWN_PREFIXES = [
  ...new Set([
    ...SERVED.map((entry) => {
      const path = entry.slice(entry.indexOf(' ') + 1)
      return path
        .split('/', 3)
        .join('/')
        .replace(/[:{?].*$/, '')
    }),
    ...DIALECTS.flatMap((dialect) => (dialect.pathPrefix === undefined ? [] : [dialect.pathPrefix])),
  ]),
]

/** A base URL ending in the version and a path starting with it again (`/v1/v1/chat/completions`). */
const DOUBLED_VERSION = /^\/v1(?:beta)?\/v1(?:beta)?(?:\/|$)/

/** Whether `path` lies under one of the gateway's own route prefixes, or doubles the version. */
export function underOwnPrefix(path: string): boolean {
  if (DOUBLED_VERSION.test(path)) return true
  for (const prefix of OWN_PREFIXES) {
    if (path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/' || path[prefix.length] === ':'))
      return true
  }
  return false
}

/** The message of a 404 for a path the gateway does not serve: the path, what is served, and the likely mistake. */
export function unknownPathMessage(method: string, path: string): string {
  let hint = ''
  if (routeOf(method, `/v1${path}`) || routeOf(method, `/v1beta${path}`)) hint = ' Is the base URL missing /v1?'
  else if (DOUBLED_VERSION.test(path)) hint = ' Does the base URL end in /v1 and the path start with it again?'
  return `Unknown path ${shown(path)}. This gateway serves ${SERVED.join(', ')}.${hint}`
}

function byMethod(method: string, allowed: Record<string, Route>): Route {
  return allowed[method] ?? { kind: 'method_not_allowed', allow: Object.keys(allowed).join(', ') }
}

// The gateway's own fixed paths' routes, made once: matching is on every request's path, so it allocates as little as it can.
const MODELS: Record<string, Route> = { GET: { kind: 'models' } }
const RECOVERIES: Record<string, Route> = { GET: { kind: 'recoveries.list' }, DELETE: { kind: 'recoveries.deleteAll' } }
const LOOKUP: Route = { kind: 'recoveries.lookup' }
/** Shared by every match without a query: nothing downstream writes to a match's query. */
const NO_QUERY = new URLSearchParams()

/** A model call's path asked with another method than `POST`: answered in the call's dialect. */
function notAllowed(call: Route): Route {
  return { kind: 'method_not_allowed', allow: 'POST', dialect: call.kind === 'call' ? call.route.dialect : undefined }
}

/** A model under `/v1/models/` or `/v1beta/models/` (a configured id may hold `/`; the method paths hold `:`). */
const MODEL_PATH = /^\/v1(?:beta)?\/models\/([^:]+)$/

/**
 * The call on a model that `path` names (`…/models/{model}:method`), whatever the request's method. The model is read
 * raw (never percent-decoded) and may hold `/` for configured ids such as `google/gemini-2.5-flash`, but not `:`; it
 * only ever selects a configured model, so `..`, `%2F` or `%3A` simply name none.
 */
function callOnAModel(path: string): Route | undefined {
  for (const { before, after, route } of CALLS_ON_A_MODEL) {
    if (!path.startsWith(before)) continue
    const colon = path.indexOf(':', before.length)
    if (colon <= before.length || path.length - colon !== after.length || !path.endsWith(after)) continue
    return { kind: 'call', route, target: { model: path.slice(before.length, colon), stream: route.streams === true } }
  }
  return undefined
}

/** A background call's path (`/v1/responses/{id}`, `…/{id}/cancel`), whatever the method; the id is kept raw. */
function backgroundCall(method: string, path: string): Route | undefined {
  for (const { prefix, format, dialect } of BACKGROUND_CALLS) {
    if (!path.startsWith(prefix)) continue
    const rest = path.slice(prefix.length)
    const slash = rest.indexOf('/')
    const id = slash === -1 ? rest : rest.slice(0, slash)
    if (id === '') return undefined
    const at = { kind: 'background', id, format, dialect } as const
    if (slash === -1) return byMethod(method, { GET: { ...at, action: 'retrieve' }, DELETE: { ...at, action: 'delete' } })
    if (rest.slice(slash) === '/cancel') return byMethod(method, { POST: { ...at, action: 'cancel' } })
    return undefined
  }
  return undefined
}

function routeOf(method: string, path: string): Route | undefined {
  // Model calls first: they are nearly every request.
  const fixed = FIXED_CALLS.get(path)
  if (fixed) return method === 'POST' ? fixed.POST : notAllowed(fixed.POST)
  switch (path) {
    case '/v1/models':
    case '/v1beta/models':
      return byMethod(method, MODELS)
    case '/v1/health':
      return byMethod(method, { GET: { kind: 'health' } })
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
  const background = BACKGROUND_CALLS.length > 0 ? backgroundCall(method, path) : undefined
  if (background) return background
  const onModel = callOnAModel(path)
  if (onModel) return method === 'POST' ? onModel : notAllowed(onModel)
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
 * Matches a request path (relative to where the gateway is mounted). A path that names nothing is `not_found` when
 * `claimUnknown` is set or it lies under one of the gateway's own route prefixes (`underOwnPrefix`), else undefined
 * (left to the host).
 */
export function matchRequest(method: string, url: string, claimUnknown: boolean, headers: IncomingHttpHeaders = {}): Match | undefined {
  const mark = url.indexOf('?')
  const path = mark === -1 ? url : url.slice(0, mark)
  let route = routeOf(method, path)
  if (!route) {
    if (!claimUnknown && !underOwnPrefix(path)) return undefined
    route = { kind: 'not_found' }
  }
  const rawQuery = mark === -1 ? '' : url.slice(mark + 1)
  return {
    route,
    dialect: dialectOfPath(path, headers, route),
    query: rawQuery === '' ? NO_QUERY : new URLSearchParams(rawQuery),
    rawQuery,
  }
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
