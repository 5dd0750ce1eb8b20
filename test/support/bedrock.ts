// A gateway with Claude on a Bedrock upstream (the mock's Bedrock routes), mounted on node:http, for the Bedrock
// end-to-end tests: SigV4 with the mock's test credentials unless a test gives other upstream options.
import { createGateway } from '../../src/gateway.js'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, type MockUpstreamOptions, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { KEY_A } from './fixture.js'
import { NODE_KINDS } from './servers.js'

/** The Bedrock model id the tests' Claude model is known by upstream (a cross-region inference profile). */
export const BEDROCK_CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
/** The id clients call it by. */
export const CLAUDE_ON_BEDROCK = 'claude-bedrock'

/** A running gateway on the mock's Bedrock routes, with what it logged and reported. */
export interface BedrockFixture {
  url: string
  mock: MockUpstream
  usage: UsageEvent[]
  logs: Array<{ level: string; line: unknown[] }>
  close(): Promise<void>
}

/** `upstream` replaces the Bedrock upstream's options (besides `type` and `baseUrl`); `gateway` adds gateway options. */
export async function startBedrockFixture(
  options: { upstream?: Record<string, unknown>; gateway?: Partial<GatewayOptions>; mock?: MockUpstreamOptions } = {},
): Promise<BedrockFixture> {
  const mock = await startMockUpstream(options.mock)
  const usage: UsageEvent[] = []
  const logs: BedrockFixture['logs'] = []
  const gateway = createGateway({
    upstreams: {
      aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', ...(options.upstream ?? { credentials: MOCK_AWS_CREDENTIALS }) },
    },
    models: [{ id: CLAUDE_ON_BEDROCK, upstream: 'aws', upstreamModel: BEDROCK_CLAUDE }],
    auth: { apiKeys: [KEY_A] },
    logger: {
      info: (...line) => logs.push({ level: 'info', line }),
      warn: (...line) => logs.push({ level: 'warn', line }),
      error: (...line) => logs.push({ level: 'error', line }),
    },
    onUsage: (u) => usage.push(u),
    ...options.gateway,
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    mock,
    usage,
    logs,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}
