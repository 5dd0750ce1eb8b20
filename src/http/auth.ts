import { hash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Dialect } from '../dialects/index.js'
import { GatewayError } from '../errors.js'
import type { AuthOptions } from '../types.js'

/** Owner ids are 32 lowercase hex characters, so nothing a client controls reaches a store key. */
export const OWNER_PATTERN = /^[0-9a-f]{32}$/

function digest(kind: string, value: string): string {
  return hash('sha256', `${kind}\u0000${value}`, 'hex').slice(0, 32)
}

/** Owner id of a raw API key. */
export function ownerOfKey(apiKey: string): string {
  return digest('key', apiKey)
}

/**
 * The owner id the gateway gives a caller (the one usage events, `gateway.usage` and a `limits.owners` function see):
 * of the `owner` an `authenticate` function returns, or of a key of `auth.apiKeys`.
 */
export function ownerId(of: { owner: string } | { apiKey: string }): string {
  if ('owner' in of && typeof of.owner === 'string') return digest('owner', of.owner)
  if ('apiKey' in of && typeof of.apiKey === 'string') return ownerOfKey(of.apiKey)
  throw new GatewayError('invalid_request', 'ownerId takes { owner } (from authenticate) or { apiKey } (from auth.apiKeys)')
}

/**
 * Resolves a presented key to an owner id; fails with GatewayError('invalid_api_key'). A fixed key list answers
 * at once (a throw, or the owner itself), sparing every request a promise; `authenticate` answers with a promise.
 */
export function createAuthenticator(
  auth: AuthOptions,
): (apiKey: string | undefined, req: IncomingMessage, dialect: Dialect) => string | Promise<string> {
  // Told in the dialect the call speaks: where its clients send their key.
  const missing = (dialect: Dialect) => new GatewayError('invalid_api_key', `Missing API key: send ${dialect.keyHint}.`)
  const invalid = () => new GatewayError('invalid_api_key', 'Incorrect API key provided.')
  if ('apiKeys' in auth) {
    const owners = new Map(auth.apiKeys.map((key) => [key, ownerOfKey(key)]))
    return (apiKey, _req, dialect) => {
      if (apiKey === undefined) throw missing(dialect)
      const owner = owners.get(apiKey)
      if (owner === undefined) throw invalid()
      return owner
    }
  }
  const { authenticate } = auth
  return async (apiKey, req, dialect) => {
    if (apiKey === undefined) throw missing(dialect)
    const result = await authenticate(apiKey, req)
    if (result === null || result === undefined) throw invalid()
    if (typeof result.owner !== 'string' || result.owner === '') {
      throw new GatewayError('internal_error', 'authenticate() returned no owner')
    }
    return digest('owner', result.owner)
  }
}
