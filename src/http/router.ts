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
import { type PathParams, PathPattern } from './path-pattern.js'

/** What a request asks for, once its path and method are known. */
export type Route =
  | { kind: 'models' }
  | { kind: 'health' }
  | { kind: 'model'; id: string }
  /** A model call of a dialect; `target` is what its path says (the model and streaming), when it says it; `params` what its pattern read. */
  | { kind: 'call'; route: RegisteredRoute; target: CallTarget | undefined; params: PathParams | undefined }
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
 * The dialect a request speaks: a model call's own, else the one whose prefix the path is under, else, on a model
 * list shared by several dialects, a stream's resume and paths not served, the one whose client the headers
 * announce; the default otherwise.
 */
function dialectOfPath(path: string, headers: IncomingHttpHeaders, route: Route): Dialect {
  if (route.kind === 'call') return route.route.dialect
  if (route.kind === 'background') return route.dialect
  if (route.kind === 'method_not_allowed' && route.dialect) return route.dialect
  for (const dialect of DIALECTS) {
    const prefix = dialect.pathPrefix
    if (prefix !== undefined && under(path, prefix)) return dialect
  }
  // A path not served that begins as only one dialect's calls do (Bedrock's, Vertex AI's) is its clients' mistake.
  if (route.kind === 'not_found') {
    for (const [head, dialect] of CALL_HEADS) if (path.startsWith(head)) return dialect
  }
  // A model list only one dialect's clients ask for (`/inference-profiles`) is answered in that dialect.
  if (route.kind === 'models' || route.kind === 'model') {
    for (const [list, dialect] of OWN_MODEL_LISTS) if (under(path, list)) return dialect
  }
  // The model list, shared by every dialect, a path the gateway does not serve (an SDK's call of an API it does not
  // offer) and a stream resumed (read by the SDK that read the call's stream) answer the client in the dialect its
  // headers announce.
  if (route.kind === 'not_found' || route.kind === 'recoveries.stream' || SHARED_MODEL_LISTS.some((list) => under(path, list))) {
    for (const dialect of DIALECTS) if (dialect !== DEFAULT_DIALECT && dialect.recognises(headers)) return dialect
  }
  return DEFAULT_DIALECT
}

/** Whether `path` is `prefix` or lies below it. */
function under(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/')
}

/** A model route whose path pattern has parameters, compiled. */
interface PatternCall {
  pattern: PathPattern
  route: RegisteredRoute
}

// The route table of model calls, from the dialect registry: fixed paths by path, and patterns with parameters; and
// the paths below the routes whose calls may run in the background, where those calls are served by id.
const FIXED_CALLS = new Map<string, { POST: Route }>()
const PATTERN_CALLS: PatternCall[] = []
const BACKGROUND_CALLS: Array<{ prefix: string; format: BackgroundFormat; dialect: Dialect }> = []
for (const route of MODEL_ROUTES) {
  if (route.background) BACKGROUND_CALLS.push({ prefix: `${route.path}/`, format: route.background, dialect: route.dialect })
  const pattern = new PathPattern(route.path)
  if (pattern.fixed) FIXED_CALLS.set(route.path, { POST: { kind: 'call', route, target: undefined, params: undefined } })
  else PATTERN_CALLS.push({ pattern, route })
}

/**
 * The pattern calls in runs of consecutive ones with the same literal head (a dialect's model path prefix): a path is
 * tried against a run's patterns only if it starts with the run's head, one test for up to six patterns. Still tried
 * in the registry's order, so the first pattern that matches wins as before.
 */
const PATTERN_RUNS: Array<{ head: string; calls: PatternCall[] }> = []
for (const call of PATTERN_CALLS) {
  const last = PATTERN_RUNS.at(-1)
  if (last?.head === call.pattern.head) last.calls.push(call)
  else PATTERN_RUNS.push({ head: call.pattern.head, calls: [call] })
}

/** Where each dialect's clients list the models (`GET {path}`) and read one (`GET {path}/{id}`), each path once. */
const MODEL_LISTS: readonly string[] = [...new Set(DIALECTS.flatMap((dialect) => dialect.modelListPaths ?? []))]

/** The model lists only one dialect lists, outside any prefix, with that dialect. */
const OWN_MODEL_LISTS: ReadonlyMap<string, Dialect> = new Map(
  MODEL_LISTS.flatMap((list) => {
    const listing = DIALECTS.filter((dialect) => dialect.modelListPaths?.includes(list))
    return listing.length === 1 && listing[0]?.pathPrefix === undefined ? [[list, listing[0] as Dialect] as const] : []
  }),
)

/** The model lists no dialect's prefix claims: their clients are told apart by their headers. */
const SHARED_MODEL_LISTS: readonly string[] = MODEL_LISTS.filter(
  (list) => !OWN_MODEL_LISTS.has(list) && !DIALECTS.some((dialect) => dialect.pathPrefix !== undefined && under(list, dialect.pathPrefix)),
)

/**
 * The literal beginnings of call paths with parameters (the text before a route pattern's first parameter) that only
 * one dialect's routes begin with, with its first such route's dialect: a path under one that names nothing is
 * answered in that dialect's shape. A beginning under a dialect's prefix goes by the prefix; one under a model list
 * (where Gemini's calls sit beside the list every dialect reads) by the client's headers, as the list does.
 */
const CALL_HEADS: ReadonlyArray<readonly [string, Dialect]> = (() => {
  const heads = new Map<string, Dialect | undefined>()
  for (const { pattern, route } of PATTERN_CALLS) {
    const head = pattern.head
    if (DIALECTS.some((dialect) => dialect.pathPrefix !== undefined && under(head, dialect.pathPrefix))) continue
    if (MODEL_LISTS.some((list) => head.startsWith(`${list}/`))) continue
    const known = heads.get(head)
    if (!heads.has(head)) heads.set(head, route.dialect)
    else if (known !== undefined && known.name !== route.dialect.name) heads.set(head, undefined)
  }
  return [...heads].flatMap(([head, dialect]) => (dialect === undefined ? [] : [[head, dialect] as const]))
})()

/** Every route at a mount, for a 404 that says what is served: the dialects' model calls, then the gateway's own. */
const SERVED = [
  ...MODEL_ROUTES.flatMap((route) => (route.listed === false ? [] : [route.listed ?? `POST ${route.path}`])),
  ...MODEL_ROUTES.flatMap((route) => (route.background ? [`GET|DELETE ${route.path}/{id}`, `POST ${route.path}/{id}/cancel`] : [])),
  ...MODEL_LISTS.flatMap((list) => [`GET ${list}`, `GET ${list}/{model}`]),
  'GET /v1/health',
  'GET|DELETE /v1/recoveries',
  'POST /v1/recoveries/lookup',
  'GET|DELETE /v1/recoveries/{request_id}',
  'GET /v1/recoveries/{request_id}/stream',
  'POST /v1/recoveries/{request_id}/cancel',
]

/**
 * The first two segments of every served path (`/v1/chat`, `/v1/recoveries`) and the dialects' own prefixes: a path
 * under one of them that names nothing is a mistyped call of the gateway's, answered with its 404 and hint even where
 * the host has the last word on other paths.
 */
const OWN_PREFIXES = [
  ...new Set([
    ...SERVED.map((entry) => {
      const path = entry.slice(entry.indexOf(' ') + 1)
      return (
        path
          .split('/', 3)
          .join('/')
          .replace(/[:{?].*$/, '')
          // A parameter in the second segment (`/model/{model}/invoke`) leaves the first alone.
          .replace(/\/$/, '')
      )
    }),
    ...DIALECTS.flatMap((dialect) => (dialect.pathPrefix === undefined ? [] : [dialect.pathPrefix])),
    // Beginnings of calls the 404's list leaves out (Vertex AI's second API version, the same calls as its first).
    ...CALL_HEADS.map(([head]) => head.replace(/\/$/, '')),
  ]),
  // A route that starts with a parameter claims no prefix: it would claim every path.
].filter((prefix) => prefix !== '')

/** The API versions the served paths start with (`/v1`…): a base URL may miss one, or end in one a path repeats. */
const VERSIONS: readonly string[] = [
  ...new Set(SERVED.map((entry) => /^\S+ (\/v\d+[a-z]*)(?:\/|$)/.exec(entry)?.[1]).filter((version) => version !== undefined)),
]

/** Whether `path` starts with one version and then another (`/v1/v1/chat/completions`). */
function doublesVersion(path: string): boolean {
  for (const first of VERSIONS) {
    if (!path.startsWith(first) || path[first.length] !== '/') continue
    const rest = path.slice(first.length)
    for (const second of VERSIONS)
      if (rest.startsWith(second) && (rest.length === second.length || rest[second.length] === '/')) return true
  }
  return false
}

/** Whether `path` lies under one of the gateway's own route prefixes, or doubles the version. */
export function underOwnPrefix(path: string): boolean {
  if (doublesVersion(path)) return true
  for (const prefix of OWN_PREFIXES) {
    if (path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/' || path[prefix.length] === ':'))
      return true
  }
  return false
}

/** The message of a 404 for a path the gateway does not serve: the path, what is served, and the likely mistake. */
export function unknownPathMessage(method: string, path: string): string {
  let hint = ''
  if (VERSIONS.some((version) => routeOf(method, `${version}${path}`))) hint = ` Is the base URL missing ${VERSIONS[0]}?`
  else if (doublesVersion(path)) hint = ' Does the base URL end in /v1 and the path start with it again?'
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

/**
 * The call a path with parameters names, whatever the request's method. Parameters are read raw (never
 * percent-decoded): the model only ever selects a configured model, so `..`, `%2F` or `%3A` simply name none.
 */
function patternCall(path: string): Route | undefined {
  for (const run of PATTERN_RUNS) {
    if (!path.startsWith(run.head)) continue
    for (const { pattern, route } of run.calls) {
      const params = pattern.match(path)
      if (params === undefined) continue
      const model = params.model
      return { kind: 'call', route, target: model === undefined ? undefined : { model, stream: route.streams === true }, params }
    }
  }
  return undefined
}

/**
 * One model under a model list (`{list}/{id}`, read only: a POST there is a mistyped call path, `%3A` for `:`). A
 * configured id may hold `/`; one with `:` is a call's path, so none; SDKs percent-encode the id (`ft%3A…`).
 */
function modelUnder(method: string, path: string): Route | undefined {
  if (method !== 'GET') return undefined
  for (const list of MODEL_LISTS) {
    if (!path.startsWith(list) || path[list.length] !== '/') continue
    const raw = path.slice(list.length + 1)
    if (raw === '' || raw.includes(':')) return undefined
    let id: string
    try {
      id = decodeURIComponent(raw)
    } catch {
      // A malformed escape names no model.
      id = raw
    }
    return { kind: 'model', id }
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
  if (MODEL_LISTS.includes(path)) return byMethod(method, MODELS)
  switch (path) {
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
  const call = patternCall(path)
  if (call) return method === 'POST' ? call : notAllowed(call)
  return modelUnder(method, path)
}

/**
 * Matches a request path (relative to where the gateway is mounted). A path that names nothing is `not_found` when
 * `claimUnknown` is set or it lies under one of the gateway's own route prefixes (`underOwnPrefix`), else undefined
 * (left to the host).
 */
export function matchRequest(method: string, url: string, claimUnknown: boolean, headers: IncomingHttpHeaders = {}): Match | undefined {
  const mark = url.indexOf('?')
  const path = mark === -1 ? url : url.slice(0, mark)
  // A POST to a fixed call path, nearly every request, is matched here: routeOf and dialectOfPath run once per
  // request each and do little, so V8 is slow to optimise them, and they stay unoptimised for thousands of calls.
  const call = method === 'POST' ? FIXED_CALLS.get(path)?.POST : undefined
  let route = call ?? routeOf(method, path)
  if (!route) {
    if (!claimUnknown && !underOwnPrefix(path)) return undefined
    route = { kind: 'not_found' }
  }
  const rawQuery = mark === -1 ? '' : url.slice(mark + 1)
  return {
    route,
    dialect: route.kind === 'call' ? route.route.dialect : dialectOfPath(path, headers, route),
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
