// How a Vertex AI upstream gets its OAuth access token: a service-account key (an object or a key file), a token
// function, or Application Default Credentials. The token is kept by RefreshingValue: fetched once, refreshed before
// it expires with one refresh in flight, never fetched per call. A key's exchange goes out as the upstream's calls do,
// through their dispatcher: a gateway behind a proxy or with its own TLS settings reaches the token endpoint too.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fail } from '../../config/checks.js'
import { GatewayError } from '../../errors.js'
import type { OutgoingRequest, UpstreamAuthorizer } from '../../upstream/authorize.js'
import { type Expiring, RefreshingValue } from '../../upstream/refreshing-value.js'
import { tokenTimeoutOf } from './options.js'
import {
  CLOUD_PLATFORM_SCOPE,
  exchangeAssertion,
  readServiceAccount,
  type ServiceAccount,
  TOKEN_TIMEOUT_MS,
  type TokenTransport,
  VertexAuthError,
} from './service-account.js'
import type { VertexToken } from './types.js'

/** The optional peer Application Default Credentials come from. */
const PEER = 'google-auth-library'

/** Where the package is, to resolve its optional peers from (ESM and CJS builds alike). */
const HERE = typeof __filename === 'string' ? __filename : import.meta.url

/** The 502 a client gets for the gateway's own credentials failing; `cause` names why, for the log. */
function authFailed(cause: unknown): GatewayError {
  return new GatewayError(
    'upstream_auth_failed',
    'The gateway could not authenticate with the upstream model; its operator has been told.',
    {
      cause,
    },
  )
}

/**
 * Adds a `Bearer` token (the whole header value, kept so a call only appends it) from a RefreshingValue. Each call
 * names the dispatcher it goes through: a token fetched for it goes the same way (`transport`, for a key's exchange).
 */
class BearerAuthorizer implements UpstreamAuthorizer {
  constructor(
    private readonly token: { get(): Promise<string> | string; invalidate?(): void },
    private readonly transport?: TokenTransport,
  ) {}

  refused(): void {
    this.token.invalidate?.()
  }

  authorize(request: OutgoingRequest): Promise<void> | void {
    if (this.transport) this.transport.dispatcher = request.dispatcher
    let got: Promise<string> | string
    try {
      got = this.token.get()
    } catch (error) {
      throw authFailed(error)
    }
    if (typeof got === 'string') {
      request.headers.push('authorization', got)
      return
    }
    return got.then(
      (value) => {
        request.headers.push('authorization', value)
      },
      (error: unknown) => {
        throw authFailed(error)
      },
    )
  }
}

/** A user's token function, called per call (it keeps its own cache) unless it says when its token expires. */
function tokenFunction(fn: () => Promise<VertexToken> | VertexToken): { get(): Promise<string> | string; invalidate(): void } {
  const fetchToken = async (): Promise<Expiring<string>> => {
    let token: VertexToken
    try {
      token = await fn()
    } catch (error) {
      throw new VertexAuthError('token_function_failed', 'the credentials function threw', { cause: error })
    }
    if (typeof token === 'string' && token !== '') return { value: `Bearer ${token}`, expiresAt: Date.now() }
    if (typeof token === 'object' && token !== null && typeof token.token === 'string' && typeof token.expiresAt === 'number') {
      return { value: `Bearer ${token.token}`, expiresAt: token.expiresAt }
    }
    throw new VertexAuthError('token_function_failed', 'the credentials function returned neither a token nor { token, expiresAt }')
  }
  const kept = new RefreshingValue(fetchToken)
  let expiring: boolean | undefined
  return {
    invalidate: () => kept.invalidate(),
    get() {
      if (expiring === true) return kept.get()
      // Until the first answer shows whether tokens carry an expiry, and for bare tokens always: asked each call.
      return fetchToken().then((token) => {
        expiring = token.expiresAt !== undefined && token.expiresAt > Date.now()
        return token.value
      })
    },
  }
}

/** Whether an optional peer can be loaded, checked at construction so a missing one is named there. */
function peerInstalled(name: string): boolean {
  try {
    createRequire(HERE).resolve(name)
    return true
  } catch {
    return false
  }
}

/** `work`, or a token_endpoint_unreachable refusal once `ms` have passed (google-auth-library's requests are its own). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VertexAuthError('token_endpoint_unreachable', `no token within ${ms} ms (tokenTimeoutMs)`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/**
 * Tokens from google-auth-library's Application Default Credentials (gcloud's, the metadata server's…), loaded lazily.
 * Its requests go through its own transport, not the upstream's dispatcher; they are given `timeoutMs` all the same.
 */
function applicationDefault(timeoutMs: number): () => Promise<Expiring<string>> {
  let client: Promise<{ getAccessToken(): Promise<{ token?: string | null }>; credentials?: { expiry_date?: number | null } }> | undefined
  return async () => {
    try {
      client ??= import(PEER).then((lib: typeof import('google-auth-library')) =>
        new lib.GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] }).getClient(),
      )
      const current = await within(timeoutMs, client)
      const { token } = await within(timeoutMs, current.getAccessToken())
      if (!token) throw new VertexAuthError('no_credentials', 'Application Default Credentials gave no access token')
      const expiry = current.credentials?.expiry_date
      // google-auth-library keeps and refreshes its own token: an unknown expiry is asked again in a few minutes.
      return { value: `Bearer ${token}`, expiresAt: typeof expiry === 'number' ? expiry : Date.now() + 6 * 60_000 }
    } catch (error) {
      client = undefined
      if (error instanceof VertexAuthError) throw error
      const text = error instanceof Error ? error.message : ''
      if (/could not load the default credentials/i.test(text)) {
        throw new VertexAuthError('no_credentials', 'no Application Default Credentials were found', { cause: error })
      }
      throw new VertexAuthError('token_endpoint_refused', 'Application Default Credentials gave no token', { cause: error })
    }
  }
}

/** The service-account key a `credentials` option, or `GOOGLE_APPLICATION_CREDENTIALS` for ADC, names; read once. */
const READ = new WeakMap<object, ServiceAccount | undefined>()

/** The key file at `path`, read and checked; a construction error names the path and what is wrong, never the key. */
function keyFile(where: string, path: string): ServiceAccount | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    fail(`${where}: cannot read the key file '${path}' (${(error as { code?: string }).code ?? 'error'})`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    fail(`${where}: the key file '${path}' is not JSON`)
  }
  // ADC's file may be a user's or an external account's: google-auth-library reads those.
  if (where.endsWith('GOOGLE_APPLICATION_CREDENTIALS') && (json as { type?: unknown } | null)?.type !== 'service_account') return undefined
  return readServiceAccount(`${where} ('${path}')`, json)
}

/** The service-account key this upstream uses, if it uses one: its `credentials`, or ADC's key file. */
export function serviceAccountOf(name: string, raw: Readonly<Record<string, unknown>>): ServiceAccount | undefined {
  if (READ.has(raw)) return READ.get(raw)
  const { credentials } = raw
  let account: ServiceAccount | undefined
  if (typeof credentials === 'string') account = keyFile(`upstreams.${name}.credentials`, credentials)
  else if (typeof credentials === 'object' && credentials !== null)
    account = readServiceAccount(`upstreams.${name}.credentials`, credentials)
  else if (credentials === undefined && raw.apiKey === undefined && raw.apiKeys === undefined) {
    const file = process.env.GOOGLE_APPLICATION_CREDENTIALS
    if (file) account = keyFile('GOOGLE_APPLICATION_CREDENTIALS', file)
  }
  READ.set(raw, account)
  return account
}

/** The authorizer of a Vertex AI upstream, or undefined in express mode (its `apiKey` goes as `x-goog-api-key`). */
export function vertexAuthorizer(name: string, raw: Readonly<Record<string, unknown>>): UpstreamAuthorizer | undefined {
  const { credentials } = raw
  const keyed = raw.apiKey !== undefined || raw.apiKeys !== undefined
  if (keyed && credentials !== undefined) fail(`upstreams.${name} takes credentials or apiKey (express mode), not both`)
  if (
    credentials !== undefined &&
    typeof credentials !== 'string' &&
    typeof credentials !== 'function' &&
    typeof credentials !== 'object'
  ) {
    fail(`upstreams.${name}.credentials must be a service-account key object, a key file path or a function returning an access token`)
  }
  if (credentials === null) fail(`upstreams.${name}.credentials must not be null`)
  const timeoutMs = tokenTimeoutOf(name, raw, TOKEN_TIMEOUT_MS)
  if (keyed) return undefined
  if (typeof credentials === 'function') return new BearerAuthorizer(tokenFunction(credentials as () => Promise<VertexToken>))
  const account = serviceAccountOf(name, raw)
  if (account !== undefined) {
    const transport: TokenTransport = { dispatcher: undefined, timeoutMs }
    return new BearerAuthorizer(new RefreshingValue(() => exchangeAssertion(account, transport)), transport)
  }
  if (!peerInstalled(PEER)) {
    fail(
      `upstreams.${name} has no credentials, so it uses Application Default Credentials, which need the optional peer ` +
        `'${PEER}': npm install ${PEER} (or give credentials: a service-account key, a key file or a token function)`,
    )
  }
  return new BearerAuthorizer(new RefreshingValue(applicationDefault(timeoutMs)))
}
