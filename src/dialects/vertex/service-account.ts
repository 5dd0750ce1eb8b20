// A service-account key exchanged for OAuth access tokens by the JWT bearer grant (RFC 7523), with node:crypto:
// the key's own `token_uri` is honoured (google-auth-library 11 posts to Google's fixed token URL whatever it says).
import { createPrivateKey, type KeyObject, sign } from 'node:crypto'
import { type Dispatcher, request } from 'undici'
import { fail } from '../../config/checks.js'
import type { Expiring } from '../../upstream/refreshing-value.js'

/** The scope a Vertex AI call needs. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

/** Google's token endpoint, for a key that names none. */
const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token'

/** How long a token request may take before the calls waiting on it fail (the next call tries again): `tokenTimeoutMs`'s default. */
export const TOKEN_TIMEOUT_MS = 10_000

/**
 * How a token request leaves the process: through the dispatcher its upstream's calls take (the upstream's own or the
 * gateway's, behind the gateway's interceptors: its proxy, TLS settings and egress rules), within `timeoutMs`.
 */
export interface TokenTransport {
  /** Undefined until the upstream's first call names it (no token is fetched before): undici's global dispatcher. */
  dispatcher: Dispatcher | undefined
  timeoutMs: number
}

/** How far the token endpoint's clock (its `date` header) may be from ours before a refusal is put down to clock skew. */
const SKEW_MS = 5 * 60_000

/**
 * Why the gateway could not get an access token: `code` is what an operator's log line names (`failureCause` reads
 * it); the message never carries a token, a key or a response body.
 */
export class VertexAuthError extends Error {
  override readonly name = 'VertexAuthError'
  constructor(
    readonly code: 'no_credentials' | 'token_endpoint_refused' | 'token_endpoint_unreachable' | 'clock_skew' | 'token_function_failed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** A service-account key as Google issues it (the JSON file), read once. */
export interface ServiceAccount {
  clientEmail: string
  privateKey: KeyObject
  keyId: string | undefined
  tokenUri: string
  projectId: string | undefined
}

/** The fields of a key object, checked; a construction error names the one at fault (never its value). */
export function readServiceAccount(where: string, json: unknown): ServiceAccount {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail(`${where} must be a service-account key object`)
  const key = json as Record<string, unknown>
  if (key.type !== undefined && key.type !== 'service_account') {
    fail(
      `${where}.type is '${String(key.type).slice(0, 40)}': only 'service_account' keys are read here (leave credentials out for other Application Default Credentials)`,
    )
  }
  if (typeof key.client_email !== 'string' || !key.client_email.includes('@'))
    fail(`${where}.client_email must be the service account's email`)
  if (typeof key.private_key !== 'string') fail(`${where}.private_key must be the key's PEM private key`)
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key.private_key)
  } catch {
    fail(`${where}.private_key is not a PEM private key that node:crypto can read`)
  }
  if (privateKey.asymmetricKeyType !== 'rsa') fail(`${where}.private_key must be an RSA key (service-account keys sign RS256)`)
  const tokenUri = key.token_uri ?? GOOGLE_TOKEN_URI
  if (typeof tokenUri !== 'string' || !/^https?:\/\//.test(tokenUri)) fail(`${where}.token_uri must be an http(s) URL`)
  return {
    clientEmail: key.client_email,
    privateKey,
    keyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined,
    tokenUri,
    projectId: typeof key.project_id === 'string' ? key.project_id : undefined,
  }
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url')

/** The signed assertion: RS256 over `header.claims`, valid an hour from now by our clock. */
export function signedAssertion(account: ServiceAccount, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000)
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(account.keyId ? { kid: account.keyId } : {}) }))
  const claims = base64url(
    JSON.stringify({ iss: account.clientEmail, scope: CLOUD_PLATFORM_SCOPE, aud: account.tokenUri, iat, exp: iat + 3600 }),
  )
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), account.privateKey)
  return `${header}.${claims}.${base64url(signature)}`
}

/** What the token endpoint said of a refusal, for the log: Google's `error` code alone (its description may quote input). */
function refusalCode(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown }
    return typeof body.error === 'string' ? body.error.slice(0, 64) : 'unknown'
  } catch {
    return 'unreadable'
  }
}

/** Whether the endpoint's `date` header is further from our clock than a signed assertion tolerates. */
function skewed(date: string | null, nowMs: number): number | undefined {
  const then = date === null ? Number.NaN : Date.parse(date)
  return Number.isFinite(then) && Math.abs(then - nowMs) > SKEW_MS ? then - nowMs : undefined
}

/** The token endpoint's answer: its status, `date` header and body text (cut short by the timeout: unreachable). */
async function post(account: ServiceAccount, body: string, transport: TokenTransport) {
  try {
    const signal = AbortSignal.timeout(transport.timeoutMs)
    const response = await request(account.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal,
      ...(transport.dispatcher === undefined ? {} : { dispatcher: transport.dispatcher }),
    })
    const date = response.headers.date
    return { status: response.statusCode, date: typeof date === 'string' ? date : null, text: await response.body.text() }
  } catch (error) {
    // Not chained as the cause: the log line's cause is then this error's code, as documented, not the network's.
    const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown }
    throw new VertexAuthError(
      'token_endpoint_unreachable',
      name === 'TimeoutError'
        ? `the token endpoint of the service-account key did not answer within ${transport.timeoutMs} ms (tokenTimeoutMs)`
        : `the token endpoint of the service-account key could not be reached (${typeof code === 'string' ? code : String(name)})`,
    )
  }
}

/** One access token for `account`, from its token endpoint; rejects with a VertexAuthError that names the cause. */
export async function exchangeAssertion(
  account: ServiceAccount,
  transport: TokenTransport,
  now: () => number = Date.now,
): Promise<Expiring<string>> {
  const sentAt = now()
  const body = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    assertion: signedAssertion(account, sentAt),
  })
  const response = await post(account, body.toString(), transport)
  const { text } = response
  const skew = skewed(response.date, sentAt)
  if (response.status < 200 || response.status >= 300) {
    if (skew !== undefined || /iat|exp|timeframe|clock/i.test(text)) {
      const by = skew === undefined ? '' : ` (its clock is ${Math.round(skew / 1000)} s from ours)`
      throw new VertexAuthError('clock_skew', `the token endpoint refused the signed assertion's times${by}: check this host's clock`)
    }
    throw new VertexAuthError(
      'token_endpoint_refused',
      `the token endpoint refused the service account's assertion (${response.status} ${refusalCode(text)})`,
    )
  }
  let token: { access_token?: unknown; expires_in?: unknown }
  try {
    token = JSON.parse(text) as typeof token
  } catch {
    throw new VertexAuthError('token_endpoint_refused', 'the token endpoint answered without a JSON token')
  }
  if (typeof token.access_token !== 'string' || token.access_token === '') {
    throw new VertexAuthError('token_endpoint_refused', 'the token endpoint answered without an access_token')
  }
  const seconds = typeof token.expires_in === 'number' && token.expires_in > 0 ? token.expires_in : 3600
  // Counted from when the request left: the token cannot have been issued earlier than that.
  return { value: `Bearer ${token.access_token}`, expiresAt: sentAt + seconds * 1000 }
}
