// Where a Bedrock upstream's AWS credentials come from: configured keys, a provider function, or the AWS default
// chain of the optional peer `@aws-sdk/credential-providers`, loaded only by an upstream that needs it. Every source
// is kept in a RefreshingValue: fetched once, refreshed before it expires, never fetched per call.
import { GatewayError } from '../../errors.js'
import { RefreshingValue } from '../../upstream/refreshing-value.js'
import { type StaticCredentials, staticCredentials } from './options.js'

/** AWS credentials as a provider gives them: with an expiry when they are temporary. */
export interface AwsCredentials extends StaticCredentials {
  expiration?: Date
}

/** What a `credentials` function returns (the AWS SDK's credential providers' shape). */
export type AwsCredentialProvider = () => Promise<AwsCredentials>

/** The optional peer holding the AWS default credential chain. */
export const CREDENTIAL_PEER = '@aws-sdk/credential-providers'

/** An error whose `code` the attempt log prints as the cause (never the message, which could carry a path). */
function causeOf(code: string): Error {
  return Object.assign(new Error(code), { code })
}

/** The 502 of credentials the gateway could not get: the client is told the operator knows; the log has `cause`. */
function credentialsFailed(code: string): GatewayError {
  return new GatewayError(
    'upstream_auth_failed',
    'The gateway could not authenticate with the upstream model; its operator has been told.',
    {
      cause: causeOf(code),
    },
  )
}

/** The AWS default chain, from the optional peer loaded now; a missing peer is an error naming it. */
async function defaultChain(): Promise<AwsCredentialProvider> {
  let peer: { fromNodeProviderChain: () => AwsCredentialProvider }
  try {
    peer = (await import(CREDENTIAL_PEER)) as typeof peer
  } catch {
    throw credentialsFailed(`MISSING_PEER ${CREDENTIAL_PEER} (npm install ${CREDENTIAL_PEER})`)
  }
  return peer.fromNodeProviderChain()
}

/** Provider credentials checked: a provider that returns something else is the operator's mistake, said plainly. */
function checked(value: unknown): AwsCredentials {
  const { accessKeyId, secretAccessKey } = (value ?? {}) as Partial<AwsCredentials>
  if (typeof accessKeyId !== 'string' || accessKeyId === '' || typeof secretAccessKey !== 'string' || secretAccessKey === '') {
    throw credentialsFailed('AWS_CREDENTIALS_INVALID: the provider returned no accessKeyId and secretAccessKey')
  }
  return value as AwsCredentials
}

/**
 * The credentials of one upstream, kept fresh: configured keys as they are; a provider's (the configured function,
 * else the default chain) fetched once and again shortly before they expire, one fetch in flight.
 */
export function credentialSource(name: string, raw: unknown): RefreshingValue<AwsCredentials> {
  if (raw !== undefined && typeof raw !== 'function') {
    const fixed = staticCredentials(name, raw)
    return new RefreshingValue(async () => ({ value: fixed, expiresAt: undefined }))
  }
  let provider: AwsCredentialProvider | undefined = raw as AwsCredentialProvider | undefined
  return new RefreshingValue(async () => {
    provider ??= await defaultChain()
    let value: AwsCredentials
    try {
      value = checked(await provider())
    } catch (error) {
      if (error instanceof GatewayError) throw error
      // `CredentialsProviderError` when no source in the chain has any: its name says so, never a key.
      const kind = (error as { name?: unknown } | null)?.name
      throw credentialsFailed(`AWS_NO_CREDENTIALS ${typeof kind === 'string' ? kind : 'Error'}`)
    }
    return { value, expiresAt: value.expiration?.getTime() }
  })
}
