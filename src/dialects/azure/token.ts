// Entra ID for Azure OpenAI: the operator's `tokenProvider` (e.g. @azure/identity's getBearerTokenProvider) is asked
// for an access token once, and again only shortly before it expires, never per call; each call carries the kept one
// as `Authorization: Bearer`.
import { GatewayError } from '../../errors.js'
import type { OutgoingRequest, UpstreamAuthorizer } from '../../upstream/authorize.js'
import { type Expiring, RefreshingValue } from '../../upstream/refreshing-value.js'

/**
 * How long a token that is not a JWT (no `exp` to read) is taken to live: the provider is asked again in the
 * background once half of it has passed (5 minutes), and the token is never sent past it.
 */
export const OPAQUE_TOKEN_MS = 10 * 60_000

/** A token with this little left when the provider hands it over is refused as expired (a clock off, a stale cache). */
const LEAST_LEFT_MS = 5_000

/** Why the gateway could not get a token, named in the failed attempt's log line (`cause`), never the token. */
class TokenProblem extends Error {
  constructor(
    readonly code: 'token_provider_failed' | 'token_provider_invalid' | 'token_expired',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'TokenProblem'
  }
}

/** When a JWT expires (its `exp`, epoch ms), or undefined for a token that is not one or says nothing. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'))
    const exp = (claims as { exp?: unknown } | null)?.exp
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

/** One token from the provider, with when it expires; a provider that fails or hands over no usable token rejects. */
async function fetchToken(provider: () => Promise<string>, now: () => number): Promise<Expiring<string>> {
  let token: unknown
  try {
    token = await provider()
  } catch (error) {
    throw new TokenProblem('token_provider_failed', 'The tokenProvider failed.', { cause: error })
  }
  if (typeof token !== 'string' || token.trim() === '') throw new TokenProblem('token_provider_invalid', 'The tokenProvider gave no token.')
  const fetchedAt = now()
  const expiresAt = jwtExpiry(token) ?? fetchedAt + OPAQUE_TOKEN_MS
  if (expiresAt - fetchedAt <= LEAST_LEFT_MS) {
    throw new TokenProblem('token_expired', 'The tokenProvider gave a token that has expired (is the clock right?).')
  }
  return { value: token, expiresAt }
}

/** The 502 a call gets when no token could be had: the gateway's credentials failed, not the caller's. */
function authFailed(cause: unknown): GatewayError {
  return new GatewayError(
    'upstream_auth_failed',
    'The gateway could not authenticate with the upstream model; its operator has been told.',
    {
      cause,
    },
  )
}

/** Adds a kept Entra ID token from `provider` to each request. `now` is the clock, for tests. */
export function tokenAuthorizer(provider: () => Promise<string>, now: () => number = Date.now): UpstreamAuthorizer {
  const token = new RefreshingValue(() => fetchToken(provider, now), { now })
  const carry = (request: OutgoingRequest, value: string) => {
    request.headers.push('authorization', `Bearer ${value}`)
  }
  return {
    authorize(request) {
      const value = token.get()
      // The kept token: no promise, no await.
      if (typeof value === 'string') return carry(request, value)
      return value.then(
        (fresh) => carry(request, fresh),
        (error: unknown) => {
          throw authFailed(error)
        },
      )
    },
  }
}
