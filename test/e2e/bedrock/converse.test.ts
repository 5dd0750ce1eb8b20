import Anthropic from '@anthropic-ai/sdk'
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { GoogleGenAI } from '@google/genai'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../../src/gateway.js'
import { MOCK_AWS_CREDENTIALS, type MockUpstream, startMockUpstream } from '../../../src/testing/index.js'
import type { UsageEvent } from '../../../src/types.js'
import { KEY_A } from '../../support/fixture.js'
import { NODE_KINDS } from '../../support/servers.js'

// Every Bedrock model but Claude speaks Converse: the AWS SDK's Converse and ConverseStream against the mock directly
// (the mock is Bedrock's shape), then every client dialect to a Nova model through the gateway, JSON and streams,
// tools round trip, usage with cache counts, and a stream exception.

const NOVA = 'us.amazon.nova-pro-v1:0'
let mock: MockUpstream
let url: string
let close: () => Promise<void>
const usage: UsageEvent[] = []
beforeAll(async () => {
  mock = await startMockUpstream()
  const gateway = createGateway({
    upstreams: { aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS } },
    models: [{ id: 'nova', upstream: 'aws', upstreamModel: NOVA }],
    auth: { apiKeys: [KEY_A] },
    logger: { warn() {}, error() {} },
    onUsage: (u) => usage.push(u),
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  url = server.url
  close = async () => {
    await server.close()
    await gateway.close()
    await mock.close()
  }
})
afterAll(() => close())

const lastCall = () => mock.requests.filter((r) => r.path.startsWith('/model/')).at(-1)
const WEATHER = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }

describe('@aws-sdk/client-bedrock-runtime Converse against the mock', () => {
  const aws = () =>
    new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: mock.url,
      credentials: MOCK_AWS_CREDENTIALS,
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler(),
    })

  it('Converse and ConverseStream', async () => {
    const whole = await aws().send(new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'hi nova' }] }] }))
    expect(whole.output?.message?.content).toEqual([{ text: 'Echo: hi nova' }])
    expect(whole.stopReason).toBe('end_turn')
    expect(whole.usage?.inputTokens).toBeGreaterThan(0)
    const streamed = await aws().send(
      new ConverseStreamCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'stream nova' }] }] }),
    )
    let text = ''
    let stop: string | undefined
    for await (const event of streamed.stream ?? []) {
      text += event.contentBlockDelta?.delta?.text ?? ''
      stop ??= event.messageStop?.stopReason
    }
    expect(text).toBe('Echo: stream nova')
    expect(stop).toBe('end_turn')
  })
})

describe('every client dialect to a Converse model through the gateway', () => {
  it('OpenAI chat: JSON (Converse’s body, signed) and stream with usage, cache counts reported', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    mock.steer('cached nova', { usage: { cacheReadInputTokens: 7, cacheWriteInputTokens: 3 } })
    const whole = await openai.chat.completions.create({
      model: 'nova',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'cached nova' },
      ],
      max_tokens: 50,
    })
    expect(whole.choices[0]?.message.content).toBe('Echo: cached nova')
    const call = lastCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(NOVA)}/converse`)
    expect(JSON.parse(call?.body ?? '{}')).toMatchObject({ system: [{ text: 'be brief' }], inferenceConfig: { maxTokens: 50 } })
    expect(usage.at(-1)).toMatchObject({ model: 'nova', cached_input_tokens: 7, cache_write_tokens: 3 })
    const stream = await openai.chat.completions.create({
      model: 'nova',
      messages: [{ role: 'user', content: 'chat stream' }],
      stream: true,
    })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('Echo: chat stream')
    expect(lastCall()?.path).toBe(`/model/${encodeURIComponent(NOVA)}/converse-stream`)
  })

  it('OpenAI chat: a tool round trip, whole and streamed', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } }]
    const first = await openai.chat.completions.create({ model: 'nova', tools, messages: [{ role: 'user', content: 'weather?' }] })
    const call = first.choices[0]?.message.tool_calls?.[0]
    expect(call).toMatchObject({ function: { name: 'get_weather' } })
    expect(first.choices[0]?.finish_reason).toBe('tool_calls')
    const stream = await openai.chat.completions.create({
      model: 'nova',
      tools,
      stream: true,
      messages: [
        { role: 'user', content: 'weather?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call!.id, content: 'foggy' },
      ],
    })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toContain('foggy')
    const sent = JSON.parse(lastCall()?.body ?? '{}')
    expect(sent.messages[2].content[0].toolResult).toMatchObject({ toolUseId: call!.id, status: 'success' })
  })

  it('Responses, Gemini and Anthropic clients', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    expect((await openai.responses.create({ model: 'nova', input: 'responses nova' })).output_text).toBe('Echo: responses nova')
    const genai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: url } })
    expect((await genai.models.generateContent({ model: 'nova', contents: 'gemini nova' })).text).toBe('Echo: gemini nova')
    const anthropic = new Anthropic({ baseURL: url, apiKey: KEY_A, maxRetries: 0 })
    const stream = anthropic.messages.stream({ model: 'nova', max_tokens: 64, messages: [{ role: 'user', content: 'anthropic nova' }] })
    expect(await stream.finalText()).toBe('Echo: anthropic nova')
  })

  it('errors: a throttled Converse call is the client’s 429; an exception mid-stream ends the stream with its error', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    mock.steer('throttle nova', { status: 429 })
    await expect(
      openai.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'throttle nova' }] }),
    ).rejects.toMatchObject({
      status: 429,
    })
    mock.steer('break nova', { stream_exception: 'serviceUnavailableException' })
    const stream = await openai.chat.completions.create({
      model: 'nova',
      messages: [{ role: 'user', content: 'break nova' }],
      stream: true,
    })
    const read = async () => {
      for await (const _chunk of stream) {
        // drained
      }
    }
    await expect(read()).rejects.toThrow(/serviceUnavailableException/)
  })
})
