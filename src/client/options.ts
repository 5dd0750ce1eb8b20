/** One step of a model call, as `onEvent` is told it (with the call's `idempotencyKey`). */
export type RecoveringFetchStep =
  /** A request of the call is sent (`attempt` counts from 1 and includes resumes). */
  | { type: 'attempt'; attempt: number; url: string }
  /** An attempt failed; the call goes on at `to` after `waitMs`. */
  | { type: 'failover'; attempt: number; from: string; to: string; reason: string; status?: number; waitMs: number }
  /** A stream was cut after `lastEventId` complete events; the rest is asked for at `url`. */
  | { type: 'resume'; attempt: number; requestId: string; lastEventId: number; url: string }
  /** The answer was served from the same call's kept or running answer (`Idempotent-Replayed: true`). */
  | { type: 'replay'; requestId: string | undefined; url: string }
  /** The app aborted the call: the gateway is asked to stop it. */
  | { type: 'cancel'; requestId: string; url: string }

/** What `onEvent` is told, one object per step; `idempotencyKey` tells the steps of concurrent calls apart. */
export type RecoveringFetchEvent = RecoveringFetchStep & { idempotencyKey: string }

/** Options of `createRecoveringFetch`. */
export interface RecoveringFetchOptions {
  /**
   * Where the same gateway deployment is reached, the main address first (e.g. the CDN one, then direct ones). A
   * request under one of them may be sent to the others with the path below the base kept.
   */
  baseUrls: readonly string[]
  /** How many requests of one call may fail before it gives up. Default: twice the number of base URLs. */
  attempts?: number
  /** Longest wait for an attempt's response headers, in ms. Default: none (the underlying fetch's own limits). */
  attemptTimeoutMs?: number
  /** The fetch that sends every request. Default: `globalThis.fetch`, looked up at each call. */
  fetch?: typeof fetch
  /** Told about every attempt, failover, resume, replay and cancel; what it throws is ignored. */
  onEvent?: (event: RecoveringFetchEvent) => void
  /**
   * Runs every Responses call (`POST …/responses`) as a background response: created with `background: true` (an
   * answer at once, with its id), then polled until it ended, or, for `stream: true`, streamed by id and resumed from
   * the last sequence number after a cut. No connection lasts as long as the model, so a limit on a connection's
   * length or a short timeout loses nothing; the app still gets a normal response or stream. Default: false.
   */
  background?: boolean
  /** How long background mode waits between two polls of a whole (non-streamed) response, in ms. Default: 1000. */
  backgroundPollMs?: number
}

/** One base URL, split for matching: its origin and its path without a trailing slash. */
export interface Base {
  origin: string
  path: string
  /** As given, for events. */
  href: string
}

/** The options checked, with their defaults. */
export interface ClientConfig {
  bases: Base[]
  attempts: number
  attemptTimeoutMs: number | undefined
  fetch: typeof fetch
  emit: (event: RecoveringFetchEvent) => void
  background: boolean
  backgroundPollMs: number
}

/** Checks the options and fills in the defaults; throws a TypeError naming the first bad one. */
export function resolveOptions(options: RecoveringFetchOptions): ClientConfig {
  if (typeof options !== 'object' || options === null) throw new TypeError('createRecoveringFetch: options are required')
  const { baseUrls, attempts, attemptTimeoutMs, fetch: given, onEvent, background, backgroundPollMs } = options
  if (!Array.isArray(baseUrls) || baseUrls.length === 0) throw new TypeError('createRecoveringFetch: baseUrls must be a non-empty array')
  const bases = baseUrls.map(parseBase)
  if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 1)) {
    throw new TypeError('createRecoveringFetch: attempts must be an integer ≥ 1')
  }
  if (attemptTimeoutMs !== undefined && !(typeof attemptTimeoutMs === 'number' && attemptTimeoutMs > 0)) {
    throw new TypeError('createRecoveringFetch: attemptTimeoutMs must be a positive number')
  }
  if (given !== undefined && typeof given !== 'function') throw new TypeError('createRecoveringFetch: fetch must be a function')
  if (onEvent !== undefined && typeof onEvent !== 'function') throw new TypeError('createRecoveringFetch: onEvent must be a function')
  if (background !== undefined && typeof background !== 'boolean')
    throw new TypeError('createRecoveringFetch: background must be a boolean')
  if (backgroundPollMs !== undefined && !(typeof backgroundPollMs === 'number' && backgroundPollMs > 0)) {
    throw new TypeError('createRecoveringFetch: backgroundPollMs must be a positive number')
  }
  return {
    bases,
    attempts: attempts ?? 2 * bases.length,
    attemptTimeoutMs,
    // Looked up per call, so a fetch patched after creation (tests, instrumentation) is the one used.
    fetch: given ?? ((input, init) => globalThis.fetch(input, init)),
    background: background ?? false,
    backgroundPollMs: backgroundPollMs ?? 1000,
    emit: (event) => {
      try {
        onEvent?.(event)
      } catch {
        // A listener's failure must never fail the call it watches.
      }
    },
  }
}

function parseBase(raw: unknown): Base {
  let url: URL
  try {
    url = new URL(String(raw))
  } catch {
    throw new TypeError(`createRecoveringFetch: baseUrls has an invalid URL: ${String(raw)}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new TypeError(`createRecoveringFetch: a base URL is http(s) without query, fragment or credentials: ${String(raw)}`)
  }
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, ''), href: String(raw) }
}

/** The index of the base `url` is under (the longest match), or -1. */
export function baseOf(bases: readonly Base[], url: URL): number {
  let found = -1
  for (let i = 0; i < bases.length; i++) {
    const base = bases[i] as Base
    if (url.origin !== base.origin) continue
    const under = url.pathname === base.path || url.pathname.startsWith(`${base.path}/`)
    if (under && (found < 0 || base.path.length > (bases[found] as Base).path.length)) found = i
  }
  return found
}

/** `rest` (a path with its query, below a base) at another base. */
export function atBase(base: Base, rest: string): string {
  return `${base.origin}${base.path}${rest}`
}
