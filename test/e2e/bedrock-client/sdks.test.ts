import { InvokeModelCommand, InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awsClient, type BedrockClientFixture, bedrockSdk, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'

// Bedrock-format clients through the gateway, on a model of each upstream kind: `@anthropic-ai/bedrock-sdk` (Messages
// rewritten to InvokeModel by the SDK, event streams read back into Anthropic's events) and the AWS SDK's InvokeModel
// and InvokeModelWithResponseStream (bearer token, HTTP/1.1). JSON, streams, tools, usage, and what each upstream got.

let fx: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture()
})
afterAll(() => fx.close())

const UPSTREAMS = [
  { kind: 'anthropic', model: MODELS.anthropic, path: '/v1/messages' },
  { kind: 'bedrock', model: MODELS.bedrock, path: '/model/' },
  { kind: 'openai', model: MODELS.openai, path: '/v1/chat/completions' },
] as const
const WEATHER = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }
const lastCall = (path: string) => fx.mock.requests.filter((r) => r.path.startsWith(path)).at(-1)
const decoder = new TextDecoder()

describe.each(UPSTREAMS)('@anthropic-ai/bedrock-sdk on an $kind upstream', ({ kind, model, path }) => {
  it('messages.create: the message, the betas of body and header reaching the upstream, usage reported', async () => {
    const message = await bedrockSdk(fx.url).messages.create(
      { model: model.id, max_tokens: 64, messages: [{ role: 'user', content: `hello ${kind}` }] },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
    )
    expect(message.content).toEqual([{ type: 'text', text: `Echo: hello ${kind}` }])
    const call = lastCall(path)
    const body = JSON.parse(call?.body ?? '{}')
    if (kind === 'anthropic') {
      // Messages as an Anthropic client would have sent it: the model and stream in, Bedrock's members out.
      expect(body).toMatchObject({ model: 'claude-sonnet-4-5', stream: false, max_tokens: 64 })
      expect(body).not.toHaveProperty('anthropic_version')
      expect(body).not.toHaveProperty('anthropic_beta')
      expect(call?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
      expect(call?.headers['anthropic-version']).toBe('2023-06-01')
    }
    if (kind === 'bedrock') {
      expect(body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14'] })
      expect(body).not.toHaveProperty('model')
    }
    expect(fx.usage.at(-1)).toMatchObject({ model: model.id, endpoint: 'bedrock.invoke', input_tokens: expect.any(Number) })
  })

  it('messages.stream: the events read from the gateway’s event-stream frames', async () => {
    const stream = bedrockSdk(fx.url).messages.stream({
      model: model.alias,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'streamed' }],
    })
    expect(await stream.finalText()).toBe('Echo: streamed')
    expect((await stream.finalMessage()).stop_reason).toBe('end_turn')
    expect(fx.usage.at(-1)).toMatchObject({ model: model.id, output_tokens: expect.any(Number) })
  })

  it('a tool round trip', async () => {
    const sdk = bedrockSdk(fx.url)
    const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER }]
    const first = await sdk.messages.create({
      model: model.id,
      max_tokens: 64,
      tools,
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    })
    const use = first.content.find((block) => block.type === 'tool_use')
    expect(first.stop_reason).toBe('tool_use')
    expect(use).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } })
    const second = await sdk.messages
      .stream({
        model: model.id,
        max_tokens: 64,
        tools,
        messages: [
          { role: 'user', content: 'weather in Paris?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: 'sunny' }] },
        ],
      })
      .finalMessage()
    expect(second.content.some((block) => block.type === 'text')).toBe(true)
  })
})

describe.each(UPSTREAMS)('the AWS SDK’s InvokeModel on an $kind upstream', ({ kind, model }) => {
  const body = (text: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: text }], ...extra })

  it('InvokeModelCommand: the message JSON, by the Bedrock-style id (with `.` and `:`, percent-encoded by the SDK)', async () => {
    const out = await awsClient(fx.url).send(
      new InvokeModelCommand({ modelId: model.alias, contentType: 'application/json', body: body(`aws ${kind}`) }),
    )
    const message = JSON.parse(decoder.decode(out.body))
    expect(message).toMatchObject({ type: 'message', content: [{ type: 'text', text: `Echo: aws ${kind}` }] })
    expect(out.$metadata.requestId).toMatch(/^[0-9A-Za-z]{26}$/)
  })

  it('InvokeModelWithResponseStreamCommand: one chunk per Anthropic event', async () => {
    const out = await awsClient(fx.url).send(
      new InvokeModelWithResponseStreamCommand({ modelId: model.id, contentType: 'application/json', body: body('aws stream') }),
    )
    const events: Array<{ type: string; delta?: { text?: string } }> = []
    for await (const part of out.body ?? []) {
      expect(part.chunk?.bytes).toBeDefined()
      events.push(JSON.parse(decoder.decode(part.chunk?.bytes)))
    }
    expect(events[0]?.type).toBe('message_start')
    expect(events.at(-1)?.type).toBe('message_stop')
    expect(events.map((e) => e.delta?.text ?? '').join('')).toBe('Echo: aws stream')
  })

  it('InvokeModel with tools: the tool_use block', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER }]
    const out = await awsClient(fx.url).send(
      new InvokeModelCommand({ modelId: model.id, contentType: 'application/json', body: body('weather in Oslo?', { tools }) }),
    )
    const message = JSON.parse(decoder.decode(out.body))
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content.find((b: { type: string }) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather' })
  })
})
