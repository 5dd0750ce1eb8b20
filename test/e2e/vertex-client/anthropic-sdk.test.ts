import type Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { anthropicVertex, LOCATION, MODELS, PROJECT, startVertexClientFixture, type VertexClientFixture } from './support.js'

// `@anthropic-ai/vertex-sdk` (AnthropicVertex) with its base URL at the gateway: messages whole and streamed, a tool
// round trip and token counts, on a Claude model of each kind of upstream and on an OpenAI one (translated).

let fx: VertexClientFixture
beforeAll(async () => {
  fx = await startVertexClientFixture()
})
afterAll(() => fx.close())

const lastUpstream = (marker: string) => fx.mock.requests.filter((request) => request.body.includes(marker)).at(-1)

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}

describe.each([
  ['an Anthropic upstream (passthrough)', MODELS.anthropic, '/v1/messages'],
  ['a Vertex AI Claude upstream (passthrough)', MODELS.vertexClaude, ':rawPredict'],
  ['an OpenAI upstream (translated)', MODELS.openai, '/v1/chat/completions'],
])('AnthropicVertex on %s', (_name, model, upstreamPath) => {
  it('messages.create: the whole message, from one upstream call on its own path', async () => {
    const marker = `vertex whole ${model}`
    const message = await anthropicVertex(fx.url).messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: marker }],
    })
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
    expect(message.usage.output_tokens).toBeGreaterThan(0)
    const sent = lastUpstream(marker)!
    expect(sent.path).toContain(upstreamPath)
    // The client's project and location are never forwarded: the upstream's own are.
    expect(sent.path).not.toContain(PROJECT)
    expect(sent.path).not.toContain(LOCATION)
    const body = JSON.parse(sent.body) as Record<string, unknown>
    if (upstreamPath === '/v1/messages') {
      // Anthropic's API takes the model in the body and no `anthropic_version`; its own configured name.
      expect(body.model).toBe('claude-sonnet-4-5')
      expect(body.anthropic_version).toBeUndefined()
    }
    if (upstreamPath === ':rawPredict') {
      expect(sent.path).toContain('/projects/upstream-project/locations/us-central1/')
      expect(body.model).toBeUndefined()
      expect(body.anthropic_version).toBe('vertex-2023-10-16')
    }
  })

  it('messages.stream: Anthropic SSE, assembled by the SDK', async () => {
    const marker = `vertex stream ${model}`
    const stream = anthropicVertex(fx.url).messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: marker }] })
    const message = await stream.finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
    expect(message.stop_reason).toBe('end_turn')
    const sent = lastUpstream(marker)!
    if (upstreamPath === ':rawPredict') expect(sent.path).toMatch(/:streamRawPredict$/)
    else expect(JSON.parse(sent.body).stream).toBe(true)
  })

  it('tools: a tool_use answered, its result sent back, the final text', async () => {
    const client = anthropicVertex(fx.url)
    const marker = `vertex tool ${model}`
    const first = await client.messages.create({
      model,
      max_tokens: 128,
      tools: [WEATHER],
      messages: [{ role: 'user', content: marker }],
    })
    expect(first.stop_reason).toBe('tool_use')
    const use = first.content.find((block) => block.type === 'tool_use')!
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: expect.any(String) } })
    const second = await client.messages
      .stream({
        model,
        max_tokens: 128,
        tools: [WEATHER],
        messages: [
          { role: 'user', content: marker },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' }] },
        ],
      })
      .finalMessage()
    expect(second.stop_reason).toBe('end_turn')
    expect(second.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('sunny, 21 C') })
  })
})

describe('AnthropicVertex token counts (count-tokens:rawPredict)', () => {
  it.each([
    ['an Anthropic upstream', MODELS.anthropic, '/v1/messages/count_tokens'],
    ['a Vertex AI Claude upstream', MODELS.vertexClaude, 'count-tokens:rawPredict'],
    ['a Gemini upstream (its own counting method)', MODELS.gemini, ':countTokens'],
  ])('on %s', async (_name, model, upstreamPath) => {
    const marker = `vertex count ${model}`
    const count = await anthropicVertex(fx.url).messages.countTokens({ model, messages: [{ role: 'user', content: marker }] })
    expect(count.input_tokens).toBeGreaterThan(0)
    expect(lastUpstream(marker)!.path).toContain(upstreamPath)
  })

  it('is metered as vertex.countTokens and kept as no record', async () => {
    const before = fx.usage.length
    const records = async () => (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.count as number
    const kept = await records()
    await anthropicVertex(fx.url).messages.countTokens({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'free count' }] })
    await eventually(() => fx.usage.length > before)
    expect(fx.usage.slice(before).map((usage) => usage.endpoint)).toEqual(['vertex.countTokens'])
    expect(await records()).toBe(kept)
  })
})
