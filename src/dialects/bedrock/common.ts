// What every API of a Bedrock upstream shares, whichever its model takes: where it is, how calls are signed, the
// paths a `baseUrl` must not run into, and its name in logs and OpenTelemetry.
import { fail } from '../../config/checks.js'
import type { Dialect } from '../dialect.js'
import { BEDROCK_OPTION_NAMES, bedrockBaseUrl, DEFAULT_MAX_FRAME_BYTES, frameBoundProblem } from './options.js'
import { sigv4Authorizer } from './sigv4.js'

/** The authorizer of a Bedrock upstream: SigV4 with its credentials, or none when it sends a Bedrock API key. */
function upstreamAuthorizer(name: string, raw: Readonly<Record<string, unknown>>) {
  const keyed = raw.apiKey !== undefined || raw.apiKeys !== undefined
  if (keyed && raw.credentials !== undefined) fail(`upstreams.${name} takes credentials or a Bedrock API key (apiKey), not both`)
  // A Bedrock API key goes as Bearer (`upstreamAuthHeaders`): nothing is signed.
  return keyed ? undefined : sigv4Authorizer(name, raw)
}

/** The members every Bedrock API's dialect shares. */
export const bedrockCommon = {
  name: 'bedrock',
  upstreamsCalled: 'Bedrock',
  otelProviderName: 'aws.bedrock',
  // The listing dialect has no clients of its own: its client routes are served by variants with their own key
  // reading and errors (`converse-client/`).
  recognises: () => false,
  clientKey: () => undefined,
  upstreamOptionNames: BEDROCK_OPTION_NAMES,
  upstreamOptions: { maxFrameBytes: { default: String(DEFAULT_MAX_FRAME_BYTES), problem: frameBoundProblem } },
  baseUrlFrom: bedrockBaseUrl,
  upstreamAuthorizer,
  // Bedrock API keys are Bearer tokens.
  upstreamAuthHeaders: (apiKey: string) => ({ authorization: `Bearer ${apiKey}` }),
  upstreamBasePath: (pathname: string) => pathname.replace(/\/+$/, ''),
  // A base URL copied with a call's path on it (`…/model/{id}/invoke`): the endpoint is the host alone.
  intendedBasePath: (pathname: string) => /^(.*?)\/model(?:\/.*)?$/.exec(pathname.replace(/\/+$/, ''))?.[1],
  doubtfulBasePath: undefined,
} satisfies Partial<Dialect>
