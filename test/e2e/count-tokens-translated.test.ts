import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MOCK_AWS_CREDENTIALS } from '../../src/testing/index.js'
import type { UsageEvent } from '../../src/types.js'
import { BEDROCK_CLAUDE } from '../support/bedrock.js'
import { type Fixture, fixtureUpstreams, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { goog } from '../support/gemini.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// A Gemini client's `:countTokens` (`@google/genai`'s `models.countTokens`) on a Claude model is counted by the
// Anthropic upstream's own `POST /v1/messages/count_tokens`, the request written as the Messages request it stands
// for; Claude on Bedrock is counted by Bedrock's CountTokens; on a model whose upstream has no counting method (Azure
// OpenAI) it is a 400 in Google's shape that says which upstreams count. The mock counts a token per four characters.

const CLAUDE = 'claude-haiku-4-5'
const ON_BEDROCK = 'claude-on-bedrock'
const ON_AZURE = 'gpt-on-azure'
const usage: UsageEvent[] = []
let fx: Fixture

beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, (mockUrl) => ({
    upstreams: {
      ...fixtureUpstreams(mockUrl),
      claude: { type: 'anthropic', baseUrl: mockUrl, apiKey: UPSTREAM_KEY },
      aws: { type: 'bedrock', baseUrl: mockUrl, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
      az: { type: 'azure', baseUrl: `${mockUrl}/openai/v1`, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gemini-2.5-flash', upstream: 'gem' },
      { id: CLAUDE, upstream: 'claude', upstreamModel: 'claude-haiku-4-5-20251001' },
      { id: ON_BEDROCK, upstream: 'aws', upstreamModel: BEDROCK_CLAUDE },
      { id: ON_AZURE, upstream: 'az' },
    ],
    onUsage: (event) => usage.push(event),
  }))
})
afterAll(() => fx.close())

const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
const count = (model: string, body: unknown) => call(`${fx.url}/v1beta/models/${model}:countTokens`, { headers: goog(KEY_A), body })
const tokens = (...texts: string[]) => Math.ceil(texts.join('').length / 4)
const genai = () => new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })

describe('Gemini countTokens on a Claude model', () => {
  it('@google/genai: counted by the Anthropic upstream’s count_tokens, the answer its totalTokens', async () => {
    const marker = 'genai counts claude'
    const counted = await genai().models.countTokens({ model: CLAUDE, contents: marker })
    expect(counted.totalTokens).toBe(tokens(marker))
    const [sent, ...more] = upstream(marker)
    expect(more).toHaveLength(0)
    expect(sent?.path).toBe('/v1/messages/count_tokens')
    expect(sent?.headers['x-api-key']).toBe(UPSTREAM_KEY)
    expect(sent?.headers['x-goog-api-key']).toBeUndefined()
    expect(JSON.parse(sent!.body)).toEqual({
      model: 'claude-haiku-4-5-20251001',
      messages: [{ role: 'user', content: marker }],
    })
    // Counting is free upstream: reported with no tokens billed, as every count is.
    const event = await eventually(() => usage.find((u) => u.endpoint === 'countTokens' && u.model === CLAUDE))
    expect(event).toMatchObject({ upstream: 'claude', input_tokens: 0, output_tokens: 0 })
  })

  it('a whole generateContentRequest: its system instruction and tools counted too, the model the path’s', async () => {
    const marker = 'whole request counted on claude'
    const system = 'Be brief.'
    const tools = [{ functionDeclarations: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'OBJECT' } }] }]
    const res = await count(CLAUDE, {
      generateContentRequest: {
        model: `models/${CLAUDE}`,
        systemInstruction: { parts: [{ text: system }] },
        contents: [{ role: 'user', parts: [{ text: marker }] }],
        tools,
        generationConfig: { maxOutputTokens: 100, temperature: 0.2 },
      },
    })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ totalTokens: tokens(system, marker) })
    const sent = JSON.parse(upstream(marker)[0]!.body)
    // Only what the counting endpoint takes: no max_tokens, no sampling.
    expect(Object.keys(sent).sort()).toEqual(['messages', 'model', 'system', 'tools'])
    expect(sent.system).toBe(system)
    expect(sent.tools).toEqual([{ name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }])
  })

  it('what the Messages API cannot hold is the client’s 400, naming the field; nothing goes upstream', async () => {
    const marker = 'safety on claude'
    const res = await count(CLAUDE, {
      contents: [{ parts: [{ text: marker }] }],
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    })
    expect(res.status).toBe(400)
    expect(res.json).toEqual({ error: { code: 400, message: expect.stringContaining('safetySettings'), status: 'INVALID_ARGUMENT' } })
    expect(upstream(marker)).toHaveLength(0)
  })

  it('the upstream’s error comes back in Google’s shape, with its status', async () => {
    const marker = 'claude count refused upstream'
    fx.mock.steer(marker, { status: 429 })
    const error = await genai()
      .models.countTokens({ model: CLAUDE, contents: marker })
      .catch((caught: unknown) => caught as { status?: number; message: string })
    fx.mock.steer(marker, undefined)
    expect(error).toMatchObject({ status: 429 })
    expect(JSON.parse((error as { message: string }).message)).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } })
  })
})

describe('Gemini countTokens on Claude on Bedrock', () => {
  it('is counted by Bedrock CountTokens, signed, with the prompt written as the InvokeModel body it stands for', async () => {
    const marker = 'count on bedrock'
    const counted = await genai().models.countTokens({ model: ON_BEDROCK, contents: marker })
    expect(counted.totalTokens).toBe(tokens(marker))
    // The InvokeModel body rides base64 inside CountTokens' own body.
    const sent = fx.mock.requests.filter((r) => r.path.endsWith('/count-tokens'))
    const bodies = sent.map((r) => Buffer.from(JSON.parse(r.body).input.invokeModel.body, 'base64').toString('utf8'))
    expect(bodies.filter((b) => b.includes(marker))).toHaveLength(1)
    expect(sent.at(-1)?.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE)}/count-tokens`)
  })
})

describe('Gemini countTokens on a model whose upstream has no counting method', () => {
  it('Azure OpenAI: a 400 in Google’s shape naming the upstreams that count; nothing goes upstream', async () => {
    const marker = 'count on azure'
    const error = await genai()
      .models.countTokens({ model: ON_AZURE, contents: marker })
      .catch((caught: unknown) => caught as { status?: number; message: string })
    expect(error).toMatchObject({ status: 400 })
    const body = JSON.parse((error as { message: string }).message) as { error: { code: number; status: string; message: string } }
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
    expect(body.error.message).toContain(`The model '${ON_AZURE}' is served by an Azure OpenAI upstream`)
    expect(body.error.message).toMatch(/serves models of Gemini and .*Bedrock upstreams only; Azure OpenAI upstreams have no route/)
    // Nor is it sent to another count, which would be refused as well.
    expect(body.error.message).not.toContain('count_tokens')
    expect(upstream(marker)).toHaveLength(0)
  })
})
