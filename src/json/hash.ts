import { createHash, hash } from 'node:crypto'
import { GatewayError } from '../errors.js'
import { canonicalHashing } from './canonical.js'

const hashing = canonicalHashing({ createHash, hash })

/** RFC 8785-style canonical JSON of a parsed value; the hash rule of SPEC 4.3 is defined over it. */
export const canonicalJson: (value: unknown) => string = hashing.canonicalJson

/** Truncated sha256 of an already canonical string, for callers that keep the canonical form. */
export function hashCanonical(canonical: string): string {
  return hashing.hashPieces([canonical])
}

/** The request_body_hash of SPEC 4.3, so lookup matches a body however it was formatted. */
export function requestBodyHash(body: string | Uint8Array | object): string {
  let value: unknown = body
  if (typeof body === 'string' || body instanceof Uint8Array) {
    // Decoded as the gateway decodes bodies (a BOM is kept, so it fails to parse there and here).
    const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new GatewayError('invalid_request', 'Request body is not valid JSON.', { cause: error })
    }
  }
  return hashing.hashPieces(hashing.canonicalPieces(value))
}

/**
 * The request_body_hash of a parsed body and, from the same canonical form, the same hash of the body without the
 * top-level `omit` members: what the response cache keys a call by, beside the hash its records carry.
 */
export function requestBodyHashes(body: Record<string, unknown>, omit: readonly string[]): { all: string; without: string } {
  const [all, without] = hashing.canonicalPiecesWithout(body, omit)
  return { all: hashing.hashPieces(all), without: hashing.hashPieces(without) }
}
