// Google Vertex AI in the mock upstream: a loopback OAuth token endpoint (the JWT bearer grant, RS256 signatures checked
// against the public keys of the service accounts it was given) and the Vertex paths of both publishers, which check
// the access token for real and are then answered by the Gemini and Anthropic fakes beside it.

import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, verify } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isObject } from '../json/value.js'
import { sendAnthropicError } from './anthropic.js'
import { GEMINI_JSON_TYPE } from './gemini.js'
import { type State, send } from './respond.js'
import { JSON_TYPE } from './shared.js'

/** What `startMockUpstream({ vertex })` accepts. */
export interface VertexMockOptions {
  /** Lifetime of the access tokens the token endpoint issues, in seconds. @default 3600 */
  tokenTtlSeconds?: number
  /** How far the token endpoint's clock is from the real one, in ms (negative: behind). @default 0 */
  clockOffsetMs?: number
  /** The express-mode API key calls may carry instead of a token (`x-goog-api-key` or `?key=`). @default none */
  apiKey?: string
}

/** A service-account key as Google issues it, pointing at the mock's token endpoint. */
export interface VertexServiceAccountKey {
  type: 'service_account'
  project_id: string
  private_key_id: string
  private_key: string
  client_email: string
  client_id: string
  token_uri: string
}

/** The Vertex AI side of a running mock upstream. */
export interface VertexMock {
  /** The token endpoint a service-account key's `token_uri` names: `{url}/token`. */
  readonly tokenUri: string
  /** Registers a service account: the token endpoint then checks its assertions against `publicKey`. */
  addServiceAccount(clientEmail: string, publicKey: string | KeyObject): void
  /** A service account with a key generated now, registered, as the JSON key file Google issues. */
  createServiceAccount(clientEmail?: string, projectId?: string): VertexServiceAccountKey
  /** Token requests received, granted or not. */
  tokenRequests: number
  /** Access tokens issued. */
  tokensIssued: number
  /** Calls refused for their token (unknown or expired). */
  refusedTokens: number
  /** See `VertexMockOptions.tokenTtlSeconds`; may be changed while it runs. */
  tokenTtlSeconds: number
  /** See `VertexMockOptions.clockOffsetMs`; may be changed while it runs. */
  clockOffsetMs: number
  /** See `VertexMockOptions.apiKey`. */
  apiKey: string | undefined
  /** Forgets every token issued, as a revocation does: calls carrying one are refused with Google's 401. */
  revokeTokens(): void
}

/** The request as the Gemini or Anthropic fake answers it, once its Vertex path and token were checked. */
export interface VertexRouted {
  pathname: string
  query: string
  text: string
}

/** A Vertex AI model method; captures version, project, location, publisher, model and method. */
const VERTEX_PATH = /^\/(v1|v1beta1)\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/(google|anthropic)\/models\/([^/:]+):(\w+)$/

/** The `anthropic_version` values Vertex AI's Claude models take: its own, and the API's dates its SDK copies in. */
const ANTHROPIC_VERSIONS = new Map([
  ['vertex-2023-10-16', '2023-06-01'],
  ['2023-06-01', '2023-06-01'],
  ['2026-10-21', '2026-10-21'],
])

const GOOGLE_METHODS = new Set(['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent'])

/** Google's 401 for a call whose access token is unknown or expired (`reason` says which). */
function unauthenticated(reason: 'ACCESS_TOKEN_EXPIRED' | 'ACCESS_TOKEN_TYPE_UNSUPPORTED' | 'CREDENTIALS_MISSING'): string {
  return JSON.stringify({
    error: {
      code: 401,
      message:
        reason === 'CREDENTIALS_MISSING'
          ? 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.'
          : 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      status: 'UNAUTHENTICATED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason,
          domain: 'googleapis.com',
          metadata: { service: 'aiplatform.googleapis.com' },
        },
      ],
    },
  })
}

/** The OAuth error body Google's token endpoint refuses a grant with. */
const grantError = (error: string, description: string) => JSON.stringify({ error, error_description: description })

/** Answers the token endpoint, or checks a Vertex call and hands it on: null when answered here, undefined when not Vertex's. */
type VertexRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  st: State,
  method: string,
  pathname: string,
  query: string,
  text: string,
) => VertexRouted | null | undefined

/** The Vertex AI side of one mock upstream; `url` is read once it listens. */
export function createVertexMock(options: VertexMockOptions, url: () => string): VertexMock & { route: VertexRoute } {
  const accounts = new Map<string, KeyObject>()
  const tokens = new Map<string, number>()
  const now = () => Date.now() + mock.clockOffsetMs

  /** Why the token endpoint refuses a grant (Google's `error` and description), or undefined when it grants it. */
  function grantProblem(text: string): [string, string] | undefined {
    const form = new URLSearchParams(text)
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return ['unsupported_grant_type', 'Invalid grant_type: ']
    const parts = (form.get('assertion') ?? '').split('.')
    if (parts.length !== 3) return ['invalid_grant', 'Invalid JWT: Malformed.']
    const [head, body, signature] = parts as [string, string, string]
    let header: Record<string, unknown>
    let claims: Record<string, unknown>
    try {
      header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as Record<string, unknown>
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    } catch {
      return ['invalid_grant', 'Invalid JWT: Malformed.']
    }
    const key = typeof claims.iss === 'string' ? accounts.get(claims.iss) : undefined
    if (header.alg !== 'RS256' || key === undefined) return ['invalid_grant', 'Invalid grant: account not found']
    if (!verify('RSA-SHA256', Buffer.from(`${head}.${body}`), key, Buffer.from(signature, 'base64url'))) {
      return ['invalid_grant', 'Invalid JWT Signature.']
    }
    if (claims.aud !== mock.tokenUri) return ['invalid_grant', 'Invalid JWT: Failed audience check.']
    const seconds = Math.floor(now() / 1000)
    const { iat, exp } = claims
    // Google's own rule: issued no later than now (a minute's leeway), not yet expired, an hour at most.
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > seconds + 60 || exp < seconds || exp - iat > 3600) {
      return [
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      ]
    }
    return undefined
  }

  function answerToken(res: ServerResponse, st: State, text: string): void {
    mock.tokenRequests++
    // The endpoint's own clock, as Google's says it: a client can tell a skewed clock by it.
    st.headers = { ...st.headers, date: new Date(now()).toUTCString(), 'cache-control': 'no-store' }
    const problem = grantProblem(text)
    if (problem !== undefined) {
      send(res, st, 400, JSON_TYPE, grantError(...problem))
      return
    }
    const token = `ya29.mock-${randomBytes(18).toString('base64url')}`
    tokens.set(token, now() + mock.tokenTtlSeconds * 1000)
    mock.tokensIssued++
    send(res, st, 200, JSON_TYPE, JSON.stringify({ access_token: token, expires_in: mock.tokenTtlSeconds, token_type: 'Bearer' }))
  }

  /** Why a call's credentials are refused (Google's body), or undefined when they hold. */
  function authProblem(req: IncomingMessage, query: string, express: boolean): string | undefined {
    const auth = req.headers.authorization
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) {
      const expires = tokens.get(auth.slice(7))
      if (expires === undefined) return unauthenticated('ACCESS_TOKEN_TYPE_UNSUPPORTED')
      if (expires <= now()) return unauthenticated('ACCESS_TOKEN_EXPIRED')
      return undefined
    }
    const header = req.headers['x-goog-api-key']
    const key = typeof header === 'string' ? header : (new URLSearchParams(query).get('key') ?? undefined)
    if (key === undefined || key === '') return unauthenticated('CREDENTIALS_MISSING')
    if (mock.apiKey === undefined || key !== mock.apiKey) {
      return JSON.stringify({
        error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' },
      })
    }
    // Express mode serves Gemini models at `publishers/…` without a project; a project's paths need a token.
    return express ? undefined : unauthenticated('CREDENTIALS_MISSING')
  }

  const route: VertexRoute = (req, res, st, method, pathname, query, text) => {
    if (pathname === '/token' && method === 'POST') {
      answerToken(res, st, text)
      return null
    }
    const match = method === 'POST' ? VERTEX_PATH.exec(pathname) : null
    if (match === null) return undefined
    const [, , project, , publisher, model = '', verb = ''] = match
    const problem = authProblem(req, query, project === undefined && publisher === 'google')
    if (problem !== undefined) {
      if (problem.includes('UNAUTHENTICATED')) mock.refusedTokens++
      send(res, st, problem.includes('"code":400') ? 400 : 401, GEMINI_JSON_TYPE, problem)
      return null
    }
    if (publisher === 'google') {
      if (!GOOGLE_METHODS.has(verb)) return notFound(res, st, pathname)
      return { pathname: `/v1beta/models/${model}:${verb}`, query, text }
    }
    const counting = model === 'count-tokens' && verb === 'rawPredict'
    if (!counting && verb !== 'rawPredict' && verb !== 'streamRawPredict') return notFound(res, st, pathname)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    if (!isObject(body)) return { pathname: counting ? '/v1/messages/count_tokens' : '/v1/messages', query, text }
    const { anthropic_version: version, ...rest } = body
    const mapped = typeof version === 'string' ? ANTHROPIC_VERSIONS.get(version) : undefined
    if (mapped === undefined) {
      sendAnthropicError(
        res,
        st,
        400,
        version === undefined
          ? 'anthropic_version: Field required'
          : `anthropic_version: "${String(version)}" is not supported on Vertex AI`,
      )
      return null
    }
    if (!counting && rest.model !== undefined) {
      sendAnthropicError(res, st, 400, 'model: Extra inputs are not permitted (Vertex AI takes the model in the path)')
      return null
    }
    // A new headers object: the recording keeps the call's own, which carries no version header.
    req.headers = { ...req.headers, 'anthropic-version': mapped }
    const named = counting ? rest : { model: decodeURIComponent(model), ...rest }
    return { pathname: counting ? '/v1/messages/count_tokens' : '/v1/messages', query, text: JSON.stringify(named) }
  }

  function notFound(res: ServerResponse, st: State, pathname: string): null {
    send(
      res,
      st,
      404,
      GEMINI_JSON_TYPE,
      JSON.stringify({ error: { code: 404, message: `Route ${pathname} not found.`, status: 'NOT_FOUND' } }),
    )
    return null
  }

  const mock = {
    get tokenUri() {
      return `${url()}/token`
    },
    addServiceAccount(clientEmail: string, publicKey: string | KeyObject) {
      accounts.set(clientEmail, typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey)
    },
    createServiceAccount(clientEmail = `gateway-${accounts.size + 1}@mock-project.iam.gserviceaccount.com`, projectId = 'mock-project') {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
      mock.addServiceAccount(clientEmail, publicKey)
      return {
        type: 'service_account' as const,
        project_id: projectId,
        private_key_id: randomBytes(20).toString('hex'),
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: clientEmail,
        client_id: String(100000000000000000000n + BigInt(accounts.size)),
        token_uri: mock.tokenUri,
      }
    },
    tokenRequests: 0,
    tokensIssued: 0,
    refusedTokens: 0,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    clockOffsetMs: options.clockOffsetMs ?? 0,
    apiKey: options.apiKey,
    revokeTokens: () => tokens.clear(),
    route,
  }
  return mock
}
