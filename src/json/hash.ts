import { createHash, hash } from 'node:crypto'
import { GatewayError } from '../errors.js'
import { canonicalHashing } from './canonical.js'
import { smallCanonicalWriter } from './canonical-small.js'

const hashing = canonicalHashing({ createHash, hash })
const small = smallCanonicalWriter(hashing.sortKeys)

/** Bodies of up to this many bytes are put in canonical form by the small-body writer (canonical-small.ts) first. */
const SMALL_CANONICAL_BYTES = 16 * 1024

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
 * The canonical form of a parsed body of `size` bytes as pieces whose concatenation it is: one, from the small-body
 * writer, for a small body; else large members apart (see `canonicalPieces`).
 */
export function canonicalBodyPieces(body: object, size: number): string[] {
  const written = size <= SMALL_CANONICAL_BYTES ? small.canonical(body) : undefined
  return written === undefined ? hashing.canonicalPieces(body) : [written]
}

/** The canonical pieces of a body of `size` bytes and of the same body without its top-level `omit` members, from one pass. */
export function canonicalBodyPiecesWithout(
  body: Record<string, unknown>,
  omit: readonly string[],
  size: number,
): [all: string[], without: string[]] {
  const written = size <= SMALL_CANONICAL_BYTES ? small.canonicalWithout(body, omit) : undefined
  return written === undefined ? hashing.canonicalPiecesWithout(body, omit) : [[written[0]], [written[1]]]
}

/** The request_body_hash of a body already in canonical pieces. */
export function hashOfPieces(pieces: string[]): string {
  return hashing.hashPieces(pieces)
}

/** A 192-bit digest (32 base64url characters) of `prefix` followed by canonical pieces, in one hash. */
export function digestAfter(prefix: string, pieces: string[]): string {
  return hashing.hashPieces(pieces.length === 1 ? [prefix + (pieces[0] as string)] : [prefix, ...pieces], 'base64url', 32)
}
