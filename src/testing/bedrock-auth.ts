// The mock's Bedrock authentication, checked for real: a SigV4 signature recomputed with `@smithy/signature-v4` from
// the request as received and the test credentials the mock was given, or a Bedrock API key as Bearer. Refusals are
// Bedrock's: 403 with the error type AWS sends for each.
import type { IncomingHttpHeaders } from 'node:http'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import type { MockAwsCredentials } from './types.js'

/** A refusal: Bedrock's error type and message. */
export interface AuthRefusal {
  type: string
  message: string
}

/** How far a signature's time may be from the mock's clock, as AWS allows. */
const SKEW_MS = 5 * 60_000

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/

/** `20261128T221717Z` as a time, or NaN. */
function amzDate(value: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : Number.NaN
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

const INVALID_TOKEN: AuthRefusal = {
  type: 'UnrecognizedClientException',
  message: 'The security token included in the request is invalid.',
}

/** Why a request with these credentials' signature is refused, or undefined when its signature is right. */
async function signatureProblem(
  method: string,
  target: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  credentials: readonly MockAwsCredentials[],
  now: number,
): Promise<AuthRefusal | undefined> {
  const auth = AUTH.exec(header(headers, 'authorization') ?? '')
  if (!auth)
    return { type: 'IncompleteSignatureException', message: 'Authorization header requires Credential, SignedHeaders and Signature.' }
  const [, keyId, day = '', region = '', service, signedList = '', signature] = auth
  const known = credentials.find((c) => c.accessKeyId === keyId)
  if (!known) return INVALID_TOKEN
  if (known.sessionToken !== undefined && header(headers, 'x-amz-security-token') !== known.sessionToken) return INVALID_TOKEN
  const date = header(headers, 'x-amz-date') ?? ''
  const signedAt = amzDate(date)
  if (Number.isNaN(signedAt) || !date.startsWith(day)) {
    return { type: 'IncompleteSignatureException', message: 'Date must be in ISO-8601 basic format (x-amz-date).' }
  }
  if (Math.abs(now - signedAt) > SKEW_MS) {
    const stamp = new Date(now).toISOString().replace(/[-:]|\.\d{3}/g, '')
    return { type: 'InvalidSignatureException', message: `Signature expired: ${date} is now earlier than ${stamp} (5 min. skew allowed).` }
  }
  if (service !== 'bedrock')
    return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: 'bedrock'.` }
  const names = signedList.split(';')
  const signed: Record<string, string> = {}
  for (const name of names) signed[name] = header(headers, name) ?? ''
  const q = target.indexOf('?')
  const signer = new SignatureV4({
    service: 'bedrock',
    region,
    sha256: Hash.bind(null, 'sha256'),
    credentials: known,
    // Only what the client signed: a content hash it did not send is not added.
    applyChecksum: names.includes('x-amz-content-sha256'),
  })
  const host = signed.host ?? ''
  const recomputed = await signer.sign(
    {
      method,
      protocol: 'https:',
      hostname: host.replace(/:\d+$/, ''),
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? {} : Object.fromEntries(new URLSearchParams(target.slice(q + 1))),
      headers: signed,
      body,
    },
    { signingDate: new Date(signedAt), signableHeaders: new Set(names) },
  )
  const expected = / Signature=([0-9a-f]{64})$/.exec(recomputed.headers.authorization ?? '')?.[1]
  if (expected === signature) return undefined
  return {
    type: 'InvalidSignatureException',
    message:
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
  }
}

/**
 * Why Bedrock refuses a request's authentication, or undefined when it passes: a Bedrock API key among `apiKeys` as
 * Bearer, or a SigV4 signature by one of `credentials` within five minutes of `now`.
 */
export function authProblem(
  method: string,
  target: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  accepted: { credentials: readonly MockAwsCredentials[]; apiKeys: readonly string[]; now: number },
): Promise<AuthRefusal | undefined> | AuthRefusal | undefined {
  const authorization = header(headers, 'authorization')
  if (authorization === undefined) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' }
  if (authorization.startsWith('Bearer ')) {
    return accepted.apiKeys.includes(authorization.slice(7))
      ? undefined
      : { type: 'UnrecognizedClientException', message: 'Invalid API Key format: Must start with pre-defined prefix' }
  }
  return signatureProblem(method, target, headers, body, accepted.credentials, accepted.now)
}
