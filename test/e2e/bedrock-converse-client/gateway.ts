// A gateway with a model of each upstream a Converse client may reach — Nova on Bedrock (Converse, passthrough),
// Claude on Bedrock (InvokeModel), OpenAI, Gemini and Anthropic (translated) — all on the one mock upstream, and the
// AWS SDK's BedrockRuntimeClient pointed at it as the guide says: a bearer `token`, HTTP/1.1.
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { createGateway } from '../../../src/gateway.js'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, startMockUpstream } from '../../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../../src/types.js'
import { upstreamsOnOneMock } from '../../support/every-dialect.js'
import { KEY_A, UPSTREAM_KEY } from '../../support/fixture.js'
import { NODE_KINDS } from '../../support/servers.js'

/** Nova's Bedrock id: a model that takes Converse, with `.` and `:` as Bedrock ids have them. */
export const NOVA = 'us.amazon.nova-pro-v1:0'
/** Claude's Bedrock id: InvokeModel upstream. */
export const BEDROCK_CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'

/** A running gateway with what it reported. */
export interface ConverseGateway {
  url: string
  mock: MockUpstream
  usage: UsageEvent[]
  close(): Promise<void>
}

/** Starts the mock and a gateway with models `nova`, `claude-bedrock`, `gpt`, `gemini` and `claude` (its ids). */
export async function startConverseGateway(options: Partial<GatewayOptions> = {}): Promise<ConverseGateway> {
  const mock = await startMockUpstream()
  const usage: UsageEvent[] = []
  const { openai, gemini, anthropic } = upstreamsOnOneMock(mock.url, UPSTREAM_KEY)
  const gateway = createGateway({
    upstreams: {
      aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
      openai,
      gemini,
      anthropic,
    },
    models: [
      { id: 'nova', upstream: 'aws', upstreamModel: NOVA, aliases: [NOVA] },
      { id: 'claude-bedrock', upstream: 'aws', upstreamModel: BEDROCK_CLAUDE },
      { id: 'gpt', upstream: 'openai', upstreamModel: 'gpt-4o-mini' },
      { id: 'gemini', upstream: 'gemini', upstreamModel: 'gemini-2.5-flash' },
      { id: 'claude', upstream: 'anthropic', upstreamModel: 'claude-sonnet-4-5' },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { info() {}, warn() {}, error() {} },
    onUsage: (u) => usage.push(u),
    ...options,
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    mock,
    usage,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/**
 * The AWS SDK's client at the gateway, as the guide configures it: the key as a bearer token, HTTP/1.1, no retries
 * unless `maxAttempts` says. `key` null: no key, the SDK signing with (made-up) AWS credentials instead.
 */
export function converseClient(url: string, key: string | null = KEY_A, maxAttempts = 1): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: url,
    ...(key === null
      ? { credentials: { accessKeyId: 'AKIANOTAKEY', secretAccessKey: 'not-a-secret' } }
      : { token: { token: key }, authSchemePreference: ['httpBearerAuth'] }),
    maxAttempts,
    requestHandler: new NodeHttpHandler(),
  })
}

/** The model calls the mock got (its Bedrock paths, or the others' `…/chat/completions`, `:generateContent`, `/messages`). */
export const modelCalls = (mock: MockUpstream) => mock.requests.filter((r) => r.method === 'POST')
