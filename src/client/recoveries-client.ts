import type {
  RecoveredAnswer,
  RecoveryDeleteAllResult,
  RecoveryDeleteResult,
  RecoveryList,
  RecoveryListParams,
  RecoveryRecord,
  RecoverySummary,
} from './recovery-types.js'

/** Options of `createRecoveriesClient`. */
export interface RecoveriesClientOptions {
  /** The gateway's root, where `/v1` lives (e.g. `https://ai.example.com`); a trailing `/v1` is tolerated. */
  baseUrl: string
  /** The caller's gateway key: records are private to it. */
  apiKey: string
  /** The fetch that sends every request. Default: `globalThis.fetch`, looked up at each call. */
  fetch?: typeof fetch
}

/** The Recoveries API of one gateway, for one key. Every method rejects with a `RecoveriesError` on a non-2xx answer. */
export interface RecoveriesClient {
  /** The caller's records, newest first: all of them, or one page (`limit`, `after`). */
  list(params?: RecoveryListParams): Promise<RecoveryList>
  /** The records kept for this request body (an object, or its JSON text), newest first; key order and spacing do not matter. */
  lookup(body: unknown): Promise<RecoverySummary[]>
  /** One record with its request and answer; a `RecoveriesError` with status 404 when there is none. */
  get(requestId: string): Promise<RecoveryRecord>
  /** Deletes one record; resolves `deleted: false` (reason `RECOVERY_NOT_FOUND`) when there was none. */
  delete(requestId: string): Promise<RecoveryDeleteResult>
  /** Deletes every record of the caller, or with `dryRun: true` only counts them (`would_delete`). */
  deleteAll(options: { dryRun: boolean }): Promise<RecoveryDeleteAllResult>
  /**
   * The service description's flow after a failed whole (non-streaming) call: looks the request body up, reads the
   * newest record kept for it, and resolves its answer; undefined when none is kept, so the caller decides whether
   * to send the call again.
   */
  recover<T = unknown>(body: unknown): Promise<RecoveredAnswer<T> | undefined>
}

/** A non-2xx answer of the Recoveries API: its status and the gateway's error body. */
export class RecoveriesError extends Error {
  /** The HTTP status of the answer. */
  readonly status: number
  /** The gateway's body as JSON (or its text when it was not JSON). */
  readonly body: unknown
  /** The gateway's error code (`error.code`, else the `reason` of a Recoveries answer), when the body names one. */
  readonly code: string | undefined

  constructor(status: number, body: unknown) {
    const { message, code } = describe(body)
    super(`Recoveries API answered ${status}${message === undefined ? '' : `: ${message}`}`)
    this.name = 'RecoveriesError'
    this.status = status
    this.body = body
    this.code = code
  }
}

/** The message and code a gateway error body carries, in either of its shapes. */
function describe(body: unknown): { message: string | undefined; code: string | undefined } {
  if (typeof body !== 'object' || body === null) return { message: typeof body === 'string' && body ? body : undefined, code: undefined }
  const outer = body as { error?: { message?: unknown; code?: unknown }; message?: unknown; reason?: unknown }
  const inner = typeof outer.error === 'object' && outer.error !== null ? outer.error : undefined
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined)
  return { message: text(inner?.message) ?? text(outer.message), code: text(inner?.code) ?? text(outer.reason) }
}

/**
 * A client of the gateway's Recoveries API (`/v1/recoveries`): list, look up, read and delete the answers the
 * gateway kept for calls whose connection broke, and `recover(body)` for the whole flow after a failed call.
 * Runs wherever `fetch` does (browsers, edge runtimes, Node).
 *
 * @example
 * ```ts
 * import { createRecoveriesClient } from 'model-gateway/client'
 *
 * const recoveries = createRecoveriesClient({ baseUrl: 'https://ai.example.com', apiKey: 'sk-...' })
 * const kept = await recoveries.recover(body) // the body of the call that failed
 * if (kept) use(kept.answer)
 * else retry()
 * ```
 * @throws TypeError when an option is invalid.
 */
export function createRecoveriesClient(options: RecoveriesClientOptions): RecoveriesClient {
  if (typeof options !== 'object' || options === null) throw new TypeError('createRecoveriesClient: options are required')
  const { apiKey, fetch: given } = options
  const root = rootOf(options.baseUrl)
  if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('createRecoveriesClient: apiKey must be a non-empty string')
  if (given !== undefined && typeof given !== 'function') throw new TypeError('createRecoveriesClient: fetch must be a function')
  // Looked up per call, so a fetch patched after creation (tests, instrumentation) is the one used.
  const send = given ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init))

  const request = async <T>(
    method: string,
    path: string,
    body?: string,
    accept?: (status: number, body: unknown) => boolean,
  ): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await send(`${root}/v1/recoveries${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    const parsed = parseOr(text)
    if (!response.ok && !accept?.(response.status, parsed)) throw new RecoveriesError(response.status, parsed)
    return parsed as T
  }
  const idPath = (requestId: string) => {
    if (typeof requestId !== 'string' || requestId === '') throw new TypeError('createRecoveriesClient: a requestId is a non-empty string')
    return `/${encodeURIComponent(requestId)}`
  }

  const client: RecoveriesClient = {
    list: (params = {}) => request<RecoveryList>('GET', listQuery(params)),
    lookup: async (body) => (await request<{ items: RecoverySummary[] }>('POST', '/lookup', bodyText(body))).items,
    get: async (requestId) => request<RecoveryRecord>('GET', idPath(requestId)),
    // A missing record is an answer here (the service's `deleted: false`), not a failure; another 404 (a wrong
    // baseUrl) still is one.
    delete: async (requestId) =>
      request<RecoveryDeleteResult>('DELETE', idPath(requestId), undefined, (status, body) => status === 404 && isNotDeleted(body)),
    deleteAll: async (mode) => {
      if (typeof mode !== 'object' || mode === null || typeof mode.dryRun !== 'boolean') {
        // Said every time, so no one deletes everything by leaving out a flag.
        throw new TypeError('createRecoveriesClient: deleteAll needs { dryRun: true } or { dryRun: false }')
      }
      return request<RecoveryDeleteAllResult>('DELETE', `?all=true&dry_run=${mode.dryRun}`)
    },
    recover: async <T>(body: unknown) => {
      for (const summary of await client.lookup(body)) {
        let record: RecoveryRecord
        try {
          record = await client.get(summary.request_id)
        } catch (error) {
          // Expired or deleted between the lookup and the read: an older one may still be there.
          if (error instanceof RecoveriesError && error.status === 404) continue
          throw error
        }
        return { requestId: record.request_id, answer: parseOr(record.response.body_raw) as T, record }
      }
      return undefined
    },
  }
  return client
}

/** `baseUrl` checked, without a trailing slash or `/v1`: the gateway's mount point. */
function rootOf(raw: unknown): string {
  let url: URL
  try {
    url = new URL(String(raw))
  } catch {
    throw new TypeError(`createRecoveriesClient: baseUrl is not a valid URL: ${String(raw)}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new TypeError(`createRecoveriesClient: baseUrl is http(s) without query, fragment or credentials: ${String(raw)}`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1(?:beta)?$/, '')}`
}

function listQuery({ limit, after }: RecoveryListParams): string {
  const query = new URLSearchParams()
  if (limit !== undefined) query.set('limit', String(limit))
  if (after !== undefined) query.set('after', after)
  const text = query.toString()
  return text === '' ? '' : `?${text}`
}

/** A lookup body: JSON text as given (its spacing does not matter), anything else as JSON. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new TypeError('createRecoveriesClient: a request body is a JSON object, or its text')
  }
  return JSON.stringify(body)
}

function isNotDeleted(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { deleted?: unknown }).deleted === false
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
