import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEDROCK_CLAUDE, type BedrockFixture, CLAUDE_ON_BEDROCK, startBedrockFixture } from '../../support/bedrock.js'
import { KEY_A } from '../../support/fixture.js'

// Every client dialect to Claude on Bedrock: Anthropic's clients passed through (the body rewritten for InvokeModel),
// OpenAI chat, Responses and Gemini translated; JSON and streams (AWS event streams read into each client's SSE);
// tools round trip; usage reported.

let fx: BedrockFixture
beforeAll(async () => {
  fx = await startBedrockFixture()
})
afterAll(() => fx.close())

const lastBedrockCall = () => fx.mock.requests.filter((r) => r.path.startsWith('/model/')).at(-1)
const WEATHER = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }

describe('Anthropic clients to Claude on Bedrock (passthrough)', () => {
  const sdk = () => new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: 0 })

  it('messages.create: InvokeModel with Bedrock’s body (no model or stream, its anthropic_version), the message as it came', async () => {
    const message = await sdk().messages.create({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: hello' }])
    const call = lastBedrockCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE)}/invoke`)
    const body = JSON.parse(call?.body ?? '{}')
    expect(body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64 })
    expect(body).not.toHaveProperty('model')
    expect(body).not.toHaveProperty('stream')
    expect(call?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAMOCKGATEWAY00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/,
    )
    expect(call?.headers['anthropic-version']).toBeUndefined()
    expect(fx.usage.at(-1)).toMatchObject({
      model: CLAUDE_ON_BEDROCK,
      upstream: 'aws',
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    })
  })

  it('messages.stream with betas: the events as Anthropic SSE, the client’s anthropic-beta as anthropic_beta', async () => {
    const stream = sdk().messages.stream(
      { model: CLAUDE_ON_BEDROCK, max_tokens: 64, messages: [{ role: 'user', content: 'streamed' }] },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m-2025-08-07' } },
    )
    expect(await stream.finalText()).toBe('Echo: streamed')
    const call = lastBedrockCall()
    expect(call?.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE)}/invoke-with-response-stream`)
    expect(JSON.parse(call?.body ?? '{}').anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'])
  })

  it('a tool round trip', async () => {
    const tools = [{ name: 'get_weather', input_schema: WEATHER }]
    const first = await sdk().messages.create({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 64,
      tools,
      messages: [{ role: 'user', content: 'weather?' }],
    })
    const use = first.content.find((b) => b.type === 'tool_use')
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather' })
    const second = await sdk().messages.create({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 64,
      tools,
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.type === 'tool_use' ? use.id : '', content: 'sunny' }] },
      ],
    })
    expect(second.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('sunny') })
  })
})

describe('OpenAI clients to Claude on Bedrock (translated)', () => {
  const sdk = () => new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, maxRetries: 0 })

  it('chat.completions: JSON and stream', async () => {
    const whole = await sdk().chat.completions.create({ model: CLAUDE_ON_BEDROCK, messages: [{ role: 'user', content: 'chat json' }] })
    expect(whole.choices[0]?.message.content).toBe('Echo: chat json')
    const body = JSON.parse(lastBedrockCall()?.body ?? '{}')
    expect(body.anthropic_version).toBe('bedrock-2023-05-31')
    expect(body).not.toHaveProperty('model')
    const stream = await sdk().chat.completions.create({
      model: CLAUDE_ON_BEDROCK,
      messages: [{ role: 'user', content: 'chat stream' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let usage: unknown
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      usage ??= chunk.usage ?? undefined
    }
    expect(text).toBe('Echo: chat stream')
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) })
  })

  it('chat.completions: a tool round trip', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } }]
    const first = await sdk().chat.completions.create({
      model: CLAUDE_ON_BEDROCK,
      tools,
      messages: [{ role: 'user', content: 'weather?' }],
    })
    const call = first.choices[0]?.message.tool_calls?.[0]
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } })
    const second = await sdk().chat.completions.create({
      model: CLAUDE_ON_BEDROCK,
      tools,
      messages: [
        { role: 'user', content: 'weather?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call!.id, content: 'rainy' },
      ],
    })
    expect(second.choices[0]?.message.content).toContain('rainy')
  })

  it('responses: JSON and stream', async () => {
    const whole = await sdk().responses.create({ model: CLAUDE_ON_BEDROCK, input: 'responses json' })
    expect(whole.output_text).toBe('Echo: responses json')
    const stream = await sdk().responses.create({ model: CLAUDE_ON_BEDROCK, input: 'responses stream', stream: true })
    let text = ''
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta
    expect(text).toBe('Echo: responses stream')
  })
})

describe('Gemini clients to Claude on Bedrock (translated)', () => {
  const genai = () => new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })

  it('generateContent and its stream', async () => {
    const whole = await genai().models.generateContent({ model: CLAUDE_ON_BEDROCK, contents: 'gemini json' })
    expect(whole.text).toBe('Echo: gemini json')
    let text = ''
    for await (const chunk of await genai().models.generateContentStream({ model: CLAUDE_ON_BEDROCK, contents: 'gemini stream' })) {
      text += chunk.text ?? ''
    }
    expect(text).toBe('Echo: gemini stream')
  })
})
