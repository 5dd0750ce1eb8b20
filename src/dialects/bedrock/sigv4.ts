// SigV4 over the exact bytes each Bedrock call sends, or a Bedrock API key as Bearer: the upstream's authorizer.
// `@smithy/signature-v4` signs; around it, the per-call work is ours to keep small: the signer is made once per
// credentials (no provider call per signing), the body is hashed once here with node:crypto and handed to it as
// `x-amz-content-sha256` (which it signs and would otherwise compute itself), and the day's derived key is kept.
import { createHash } from 'node:crypto'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import type { OutgoingRequest, UpstreamAuthorizer } from '../../upstream/authorize.js'
import { type AwsCredentials, credentialSource } from './credentials.js'
import { signingRegion } from './options.js'

/** The service name Bedrock's runtime signs under. */
const SERVICE = 'bedrock'

/** The headers a signature covers: the host, the body's type and AWS's own; nothing a proxy on the way may change. */
const SIGNED = new Set(['content-type'])

/** The parts of an origin a signed request names, parsed once per origin. */
interface Origin {
  origin: string
  protocol: string
  hostname: string
  port: number | undefined
  /** The host as undici writes it (no default port): signed, and sent as signed. */
  host: string
}

function parsed(origin: string): Origin {
  const url = new URL(origin)
  return { origin, protocol: url.protocol, hostname: url.hostname, port: url.port === '' ? undefined : Number(url.port), host: url.host }
}

/** A request of undici's flat header list in the shape `@smithy/signature-v4` signs, its body's hash given. */
function signable(request: OutgoingRequest, at: Origin) {
  const headers: Record<string, string> = {
    host: at.host,
    'x-amz-content-sha256': createHash('sha256').update(request.body).digest('hex'),
  }
  for (let i = 0; i < request.headers.length; i += 2) {
    const name = request.headers[i] as string
    if (SIGNED.has(name)) headers[name] = request.headers[i + 1] as string
  }
  const q = request.path.indexOf('?')
  const query = q === -1 ? {} : Object.fromEntries(new URLSearchParams(request.path.slice(q + 1)))
  return {
    method: request.method,
    protocol: at.protocol,
    hostname: at.hostname,
    port: at.port,
    path: q === -1 ? request.path : request.path.slice(0, q),
    query,
    headers,
    body: request.body,
  }
}

/** What `@smithy/signature-v4` derives a day's signing key with (not part of its typed surface). */
type KeyDeriver = (credentials: AwsCredentials, region: string, shortDate: string, service?: string) => Promise<Uint8Array>

/**
 * A signer for one set of credentials that keeps the day's derived key. The library keeps derived keys too, but
 * finds its copy by an HMAC of the credentials computed on every signing; this looks it up by the day alone. Where
 * the library has no such method (another version), signing is as the library does it.
 */
function signerFor(region: string, credentials: AwsCredentials): SignatureV4 {
  const signer = new SignatureV4({ service: SERVICE, region, sha256: Hash.bind(null, 'sha256'), credentials })
  const open = signer as unknown as { getSigningKey?: KeyDeriver }
  const derive = open.getSigningKey
  if (typeof derive !== 'function') return signer
  let kept: { day: string; region: string; service: string | undefined; key: Promise<Uint8Array> } | undefined
  open.getSigningKey = (creds, signingRegion, shortDate, service) => {
    if (kept?.day === shortDate && kept.region === signingRegion && kept.service === service && creds === credentials) return kept.key
    const key = derive.call(signer, creds, signingRegion, shortDate, service)
    // A key that failed is not kept: the next signing derives it again.
    key.catch(() => {
      if (kept?.key === key) kept = undefined
    })
    kept = { day: shortDate, region: signingRegion, service, key }
    return key
  }
  return signer
}

/**
 * Signs each request for `region` with the upstream's credentials (fetched once, refreshed before they expire),
 * adding `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` when temporary, and `authorization`.
 */
export function sigv4Authorizer(name: string, raw: Readonly<Record<string, unknown>>): UpstreamAuthorizer {
  const region = signingRegion(name, raw)
  const credentials = credentialSource(name, raw.credentials)
  // One signer per credentials: a refresh makes the next, and the signer in hand is never asked for credentials.
  let signing: { credentials: AwsCredentials; signer: SignatureV4 } | undefined
  let origin: Origin | undefined
  return {
    async authorize(request) {
      const current = credentials.get()
      const kept = current instanceof Promise ? await current : current
      if (signing?.credentials !== kept) signing = { credentials: kept, signer: signerFor(region, kept) }
      if (origin?.origin !== request.origin) origin = parsed(request.origin)
      const signed = await signing.signer.sign(signable(request, origin))
      for (const [header, value] of Object.entries(signed.headers)) {
        if (header === 'content-type') continue
        request.headers.push(header, value)
      }
    },
  }
}
