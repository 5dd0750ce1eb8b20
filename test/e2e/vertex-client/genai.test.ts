import { ApiError, type FunctionDeclaration, Type } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { genaiVertex, LOCATION, MODELS, PROJECT, startVertexClientFixture, type VertexClientFixture } from './support.js'

// `@google/genai` with `vertexai: true` and its base URL at the gateway: generateContent, generateContentStream and
// countTokens under `/v1beta1/projects/…` (its default) and `/v1/projects/…`, on a Gemini model of each kind of
// upstream and on an OpenAI one (translated); countTokens on Claude models too (counted by their upstream).

let fx: VertexClientFixture
beforeAll(async () => {
  fx = await startVertexClientFixture()
})
afterAll(() => fx.close())

const lastUpstream = (marker: string) => fx.mock.requests.filter((request) => request.body.includes(marker)).at(-1)

const WEATHER: FunctionDeclaration = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
}

describe.each([
  ['a Gemini upstream (passthrough)', MODELS.gemini, '/v1beta/models/gemini-2.5-flash:'],
  ['a Vertex AI Gemini upstream (passthrough)', MODELS.vertexGemini, '/publishers/google/models/gemini-2.5-flash:'],
  ['an OpenAI upstream (translated)', MODELS.openai, '/v1/chat/completions'],
])('@google/genai in Vertex mode on %s', (_name, model, upstreamPath) => {
  it.each([['v1beta1'], ['v1']])('models.generateContent (%s)', async (apiVersion) => {
    const marker = `genai whole ${model} ${apiVersion}`
    const res = await genaiVertex(fx.url, { apiVersion }).models.generateContent({ model, contents: marker })
    expect(res.text).toBe(`Echo: ${marker}`)
    expect(res.usageMetadata?.totalTokenCount).toBeGreaterThan(0)
    const sent = lastUpstream(marker)!
    expect(sent.path).toContain(upstreamPath)
    expect(sent.path).not.toContain(PROJECT)
    expect(sent.path).not.toContain(LOCATION)
  })

  it('models.generateContentStream: SSE, read chunk by chunk', async () => {
    const marker = `genai stream ${model}`
    let text = ''
    let chunks = 0
    for await (const chunk of await genaiVertex(fx.url).models.generateContentStream({ model, contents: marker })) {
      text += chunk.text ?? ''
      chunks++
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(chunks).toBeGreaterThan(1)
  })

  it('tools: a function call, its response sent back, the final text', async () => {
    const client = genaiVertex(fx.url)
    const marker = `genai tool ${model}`
    const config = { tools: [{ functionDeclarations: [WEATHER] }] }
    const first = await client.models.generateContent({ model, contents: marker, config })
    const call = first.functionCalls?.[0]
    expect(call).toMatchObject({ name: 'get_weather', args: { city: expect.any(String) } })
    const second = await client.models.generateContent({
      model,
      config,
      contents: [
        { role: 'user', parts: [{ text: marker }] },
        first.candidates![0]!.content!,
        { role: 'user', parts: [{ functionResponse: { id: call!.id, name: 'get_weather', response: { result: 'sunny, 21 C' } } }] },
      ],
    })
    expect(second.text).toContain('sunny, 21 C')
  })
})

describe('@google/genai in Vertex mode: countTokens', () => {
  it.each([
    ['a Gemini upstream', MODELS.gemini, '/v1beta/models/gemini-2.5-flash:countTokens'],
    ['a Vertex AI Gemini upstream', MODELS.vertexGemini, '/publishers/google/models/gemini-2.5-flash:countTokens'],
  ])('on %s', async (_name, model, upstreamPath) => {
    const marker = `genai count ${model}`
    const res = await genaiVertex(fx.url).models.countTokens({ model, contents: marker })
    expect(res.totalTokens).toBeGreaterThan(0)
    expect(lastUpstream(marker)!.path).toContain(upstreamPath)
  })

  // A model of another format is counted by its upstream's own counting method, the whole request (the system
  // instruction too) written as that upstream's request; the mock counts a token per four characters of the text.
  it.each([
    ['an Anthropic upstream', MODELS.anthropic, '/v1/messages/count_tokens'],
    ['a Vertex AI Claude upstream', MODELS.vertexClaude, '/publishers/anthropic/models/count-tokens:rawPredict'],
    ['an OpenAI upstream', MODELS.openai, '/v1/responses/input_tokens'],
  ])('on %s: counted by its own counting method', async (_name, model, upstreamPath) => {
    const marker = `genai count translated ${model}`
    const system = 'Answer in one word.'
    const res = await genaiVertex(fx.url).models.countTokens({ model, contents: marker, config: { systemInstruction: system } })
    expect(res.totalTokens).toBe(Math.ceil((system + marker).length / 4))
    const sent = lastUpstream(marker)!
    expect(sent.path).toContain(upstreamPath)
    expect(sent.body).toContain(system)
    expect(sent.body).not.toContain('max_tokens')
  })
})

describe('@google/genai in Vertex mode: errors in google.rpc shape', () => {
  it('without a key: 401 UNAUTHENTICATED, which the SDK raises as an ApiError', async () => {
    const error = await genaiVertex(fx.url, { key: '' })
      .models.generateContent({ model: MODELS.gemini, contents: 'no key' })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(401)
    expect(JSON.parse((error as ApiError).message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } })
  })

  it('an unknown model: 404 NOT_FOUND', async () => {
    const error = await genaiVertex(fx.url)
      .models.generateContent({ model: 'no-such-model', contents: 'unknown' })
      .catch((caught: unknown) => caught)
    expect((error as ApiError).status).toBe(404)
    expect(JSON.parse((error as ApiError).message)).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
  })
})
