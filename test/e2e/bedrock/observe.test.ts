import diagnosticsChannel from 'node:diagnostics_channel'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { createGateway } from '../../../src/gateway.js'
import { gatewayChannels } from '../../../src/index.js'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, startMockUpstream } from '../../../src/testing/index.js'
import type { BedrockUpstreamOptions, UsageEvent } from '../../../src/types.js'
import { BEDROCK_CLAUDE, type BedrockFixture, CLAUDE_ON_BEDROCK, startBedrockFixture } from '../../support/bedrock.js'
import { KEY_A } from '../../support/fixture.js'
import { closedPort } from '../../support/http.js'
import { NODE_KINDS } from '../../support/servers.js'

// What a Bedrock upstream looks like to an operator: its calls named `aws.bedrock` (OpenTelemetry's provider name, in
// the channels the OTel entry reads), and a fallback from Claude on Bedrock to Claude on Anthropic's own API.

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

describe('a Bedrock upstream to an operator', () => {
  it('its calls carry gen_ai.provider.name aws.bedrock', async () => {
    const fx: BedrockFixture = await startBedrockFixture()
    closing.push(() => fx.close())
    const providers: unknown[] = []
    const listen = (message: unknown) => providers.push((message as { provider?: unknown }).provider)
    diagnosticsChannel.subscribe(gatewayChannels.callEnd, listen)
    try {
      const message = await new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: 0 }).messages.create({
        model: CLAUDE_ON_BEDROCK,
        max_tokens: 16,
        messages: [{ role: 'user', content: 'observed' }],
      })
      expect(message.content[0]).toMatchObject({ text: 'Echo: observed' })
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, listen)
    }
    expect(providers).toContain('aws.bedrock')
  })

  /** A gateway whose Claude on Bedrock (`aws`, as given) falls back to Claude on Anthropic's API on `mock`. */
  async function fallbackGateway(mock: MockUpstream, aws: BedrockUpstreamOptions, onUsage?: (u: UsageEvent) => void) {
    const gateway = createGateway({
      upstreams: { aws, claude: { type: 'anthropic', baseUrl: mock.url, apiKey: 'anthropic-key' } },
      models: [
        { id: 'claude', upstream: 'aws', upstreamModel: BEDROCK_CLAUDE, fallbacks: ['claude-direct'] },
        { id: 'claude-direct', upstream: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      ],
      auth: { apiKeys: [KEY_A] },
      logger: { warn() {}, error() {} },
      onUsage,
    })
    const server = await NODE_KINDS[0]!.mount(gateway)
    closing.push(async () => {
      await server.close()
      await gateway.close()
      await mock.close()
    })
    return new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
  }

  it('Claude on Bedrock unreachable falls back to Claude on Anthropic’s API, for an OpenAI client', async () => {
    const mock = await startMockUpstream()
    const usage: UsageEvent[] = []
    const openai = await fallbackGateway(
      mock,
      { type: 'bedrock', baseUrl: `http://127.0.0.1:${await closedPort()}`, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
      (u) => usage.push(u),
    )
    const answer = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'fall back' }] })
    expect(answer.choices[0]?.message.content).toBe('Echo: fall back')
    expect(mock.requests.at(-1)?.path).toBe('/v1/messages')
    expect(usage.at(-1)).toMatchObject({ model: 'claude', upstream: 'claude' })
  })

  it('Claude on Bedrock whose credentials fail falls back to Claude on Anthropic’s API: nothing was sent', async () => {
    const mock = await startMockUpstream()
    const openai = await fallbackGateway(mock, {
      type: 'bedrock',
      baseUrl: mock.url,
      region: 'us-east-1',
      credentials: async () => {
        throw new Error('no credentials here')
      },
    })
    const answer = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'no keys' }] })
    expect(answer.choices[0]?.message.content).toBe('Echo: no keys')
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/messages'])
  })
})
