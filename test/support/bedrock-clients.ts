// A gateway for the Bedrock-format client tests: one Claude model on each upstream kind a Bedrock-format client may
// reach (Anthropic and Claude on Bedrock passthrough, OpenAI translated), all on the package's mock, mounted on
// node:http; and the clients pointed at it (`@anthropic-ai/bedrock-sdk`, the AWS SDK over HTTP/1.1 with a bearer token).
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk'
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { BEDROCK_CLAUDE } from './bedrock.js'
import { KEY_A } from './fixture.js'
import { NODE_KINDS } from './servers.js'

/** The models, by the upstream each is on; each answers to a Bedrock-style alias too. */
export const MODELS = {
  anthropic: { id: 'claude-anthropic', alias: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  bedrock: { id: 'claude-bedrock', alias: 'anthropic.claude-bedrock-v1:0' },
  openai: { id: 'gpt-openai', alias: 'openai.gpt-5:0' },
} as const

/** A running gateway with its mock, the usage it reported and the lines it logged. */
export interface BedrockClientFixture {
  url: string
  mock: MockUpstream
  gateway: Gateway
  usage: UsageEvent[]
  logs: unknown[][]
  close(): Promise<void>
}

/** Starts the gateway; `gateway` adds options. */
export async function startBedrockClientFixture(gateway: Partial<GatewayOptions> = {}): Promise<BedrockClientFixture> {
  const mock = await startMockUpstream()
  const usage: UsageEvent[] = []
  const logs: unknown[][] = []
  const log = (...line: unknown[]) => logs.push(line)
  const instance = createGateway({
    upstreams: {
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: 'sk-upstream' },
      aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
      oai: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: 'sk-upstream' },
    },
    models: [
      { id: MODELS.anthropic.id, upstream: 'claude', upstreamModel: 'claude-sonnet-4-5', aliases: [MODELS.anthropic.alias] },
      { id: MODELS.bedrock.id, upstream: 'aws', upstreamModel: BEDROCK_CLAUDE, aliases: [MODELS.bedrock.alias] },
      { id: MODELS.openai.id, upstream: 'oai', upstreamModel: 'gpt-5', aliases: [MODELS.openai.alias] },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { info: log, warn: log, error: log },
    onUsage: (u) => usage.push(u),
    ...gateway,
  })
  const server = await NODE_KINDS[0]!.mount(instance)
  return {
    url: server.url,
    mock,
    gateway: instance,
    usage,
    logs,
    async close() {
      await server.close()
      await instance.close()
      await mock.close()
    },
  }
}

/** `@anthropic-ai/bedrock-sdk` at the gateway: auth skipped, the caller's key (null: none) as a bearer header. */
export function bedrockSdk(url: string, key: string | null = KEY_A, maxRetries = 0): AnthropicBedrock {
  return new AnthropicBedrock({
    baseURL: url,
    awsRegion: 'us-east-1',
    skipAuth: true,
    maxRetries,
    defaultHeaders: key === null ? {} : { authorization: `Bearer ${key}` },
  })
}

/** The AWS SDK at the gateway: a bearer token (`httpBearerAuth`) over HTTP/1.1, as the guide says. */
export function awsClient(url: string, key = KEY_A, maxAttempts = 1): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: url,
    token: { token: key },
    authSchemePreference: ['httpBearerAuth'],
    requestHandler: new NodeHttpHandler(),
    maxAttempts,
  })
}
