// SigV4 over the exact bytes each Bedrock call sends, or a Bedrock API key as Bearer: the upstream's authorizer.
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import type { OutgoingRequest, UpstreamAuthorizer } from '../../upstream/authorize.js'
import { credentialSource } from './credentials.js'
import { signingRegion } from './options.js'

/** The service name Bedrock's runtime signs under. */
const SERVICE = 'bedrock'

/** The headers a signature covers: the host, the body's type and AWS's own; nothing a proxy on the way may change. */
const SIGNED = new Set(['content-type'])

/** A request of undici's flat header list in the shape `@smithy/signature-v4` signs. */
function signable(request: OutgoingRequest, host: string) {
  const url = new URL(request.origin)
  const headers: Record<string, string> = { host }
  for (let i = 0; i < request.headers.length; i += 2) {
    const name = request.headers[i] as string
    if (SIGNED.has(name)) headers[name] = request.headers[i + 1] as string
  }
  const q = request.path.indexOf('?')
  const query = q === -1 ? {} : Object.fromEntries(new URLSearchParams(request.path.slice(q + 1)))
  return {
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: q === -1 ? request.path : request.path.slice(0, q),
    query,
    headers,
    body: request.body,
  }
}

/**
 * Signs each request for `region` with the upstream's credentials (fetched once, refreshed before they expire),
 * adding `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` when temporary, and `authorization`.
 */
export function sigv4Authorizer(name: string, raw: Readonly<Record<string, unknown>>): UpstreamAuthorizer {
  const region = signingRegion(name, raw)
  const credentials = credentialSource(name, raw.credentials)
  const signer = new SignatureV4({
    service: SERVICE,
    region,
    sha256: Hash.bind(null, 'sha256'),
    // Read per signing from the kept value: a refresh is picked up by the next call, never awaited by this one.
    credentials: async () => credentials.get(),
  })
  let hosts: { origin: string; host: string } | undefined
  return {
    async authorize(request) {
      // The host as undici writes it (no default port): signed, and sent as signed.
      if (hosts?.origin !== request.origin) hosts = { origin: request.origin, host: new URL(request.origin).host }
      const signed = await signer.sign(signable(request, hosts.host))
      for (const [header, value] of Object.entries(signed.headers)) {
        if (header === 'content-type') continue
        request.headers.push(header, value)
      }
    },
  }
}
