import { MODEL_CALL_PATH_ENDINGS } from './model-paths.js'
import { type Base, baseOf } from './options.js'

/** Whether a path is a model call's (see `MODEL_CALL_PATH_ENDINGS`). */
const isModelCall = (pathname: string) => MODEL_CALL_PATH_ENDINGS.some((ending) => pathname.endsWith(ending))

/** A model call as every attempt sends it. */
export interface ModelCall {
  /** Index of the base URL the app addressed. */
  base: number
  /** Path and query below that base. */
  rest: string
  /** What each attempt sends (with the key); `signal` is per attempt. */
  init: RequestInit
  /** The app's signal, if any. */
  signal: AbortSignal | undefined
  idempotencyKey: string
  /** The headers and query parameter that carry the caller's credentials, for the Recoveries requests. */
  credentials: { headers: Headers; key: string | undefined }
}

/**
 * The model call `input`/`init` describe, or undefined when the request is anything else (another method or path, or
 * a URL under none of the base URLs): that one passes through untouched. The body is read once into something every
 * attempt can send again.
 */
export async function modelCallOf(
  bases: readonly Base[],
  input: RequestInfo | URL,
  init: RequestInit | undefined,
): Promise<ModelCall | undefined> {
  const request = typeof Request !== 'undefined' && input instanceof Request ? input : undefined
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase()
  if (method !== 'POST') return undefined
  let url: URL
  try {
    url = new URL(request ? request.url : String(input))
  } catch {
    return undefined
  }
  if (!isModelCall(url.pathname)) return undefined
  const base = baseOf(bases, url)
  if (base < 0) return undefined

  const headers = new Headers(init?.headers ?? request?.headers)
  const idempotencyKey = headers.get('idempotency-key') ?? newKey()
  headers.set('idempotency-key', idempotencyKey)
  let body = init?.body !== undefined ? init.body : request ? await request.arrayBuffer() : undefined
  // A stream can be sent once; every other body type can be sent again as it is.
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) body = await new Response(body).arrayBuffer()
  const sent: RequestInit & { duplex?: string } = { ...init, method, headers, body }
  delete sent.duplex
  delete sent.signal
  return {
    base,
    rest: url.pathname.slice((bases[base] as Base).path.length) + url.search,
    init: sent,
    signal: init?.signal ?? request?.signal ?? undefined,
    idempotencyKey,
    credentials: credentialsOf(headers, url),
  }
}

function credentialsOf(headers: Headers, url: URL): ModelCall['credentials'] {
  const copy = new Headers()
  const authorization = headers.get('authorization')
  const googKey = headers.get('x-goog-api-key')
  const anthropicKey = headers.get('x-api-key')
  const key = url.searchParams.get('key') ?? undefined
  if (authorization) copy.set('authorization', authorization)
  if (googKey) copy.set('x-goog-api-key', googKey)
  if (anthropicKey) copy.set('x-api-key', anthropicKey)
  // Answers in the client's dialect: the gateway tells an Anthropic client by its version header.
  const version = headers.get('anthropic-version')
  if (version) copy.set('anthropic-version', version)
  // The Recoveries API takes Bearer keys: a Gemini or Anthropic client's key is sent that way too, to the same gateway.
  const bare = googKey ?? anthropicKey ?? key
  if (!authorization && bare) copy.set('authorization', `Bearer ${bare}`)
  return { headers: copy, key }
}

/** A fresh random key: `crypto.randomUUID` where there is one (not in insecure browser contexts), else a v4 UUID. */
function newKey(): string {
  const crypto = globalThis.crypto
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID()
  const bytes = new Uint8Array(16)
  crypto.getRandomValues(bytes)
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
