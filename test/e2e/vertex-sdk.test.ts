import { AnthropicVertex } from '@anthropic-ai/vertex-sdk'
import { GoogleGenAI } from '@google/genai'
import { OAuth2Client } from 'google-auth-library'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { mockAccessToken, VERTEX_CLAUDE, VERTEX_GEMINI } from '../support/vertex.js'

// Mock fidelity: Google's and Anthropic's own Vertex AI clients, run against the mock directly, succeed. So the mock's
// token checks, paths and bodies are Vertex AI's, not the gateway's idea of them.

let mock: MockUpstream
let authClient: OAuth2Client
beforeAll(async () => {
  mock = await startMockUpstream()
  const { token, expiresAt } = await mockAccessToken(mock.vertex.createServiceAccount())
  // A google-auth-library client holding the token the mock's endpoint issued (the library itself would post to
  // Google's fixed token URL, whatever the key's token_uri says).
  authClient = new OAuth2Client()
  authClient.setCredentials({ access_token: token, expiry_date: expiresAt, token_type: 'Bearer' })
})
afterAll(() => mock.close())

describe('@anthropic-ai/vertex-sdk against the mock', () => {
  const client = () =>
    new AnthropicVertex({ region: 'us-central1', projectId: 'mock-project', baseURL: `${mock.url}/v1`, authClient, maxRetries: 0 })

  it('messages.create: rawPredict with the token, the model in the path', async () => {
    const message = await client().messages.create({
      model: VERTEX_CLAUDE,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'vertex sdk hello' }],
    })
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: vertex sdk hello' }])
    const sent = mock.requests.at(-1)!
    expect(sent.path).toBe(
      '/v1/projects/mock-project/locations/us-central1/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
    )
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.mock-/)
  })

  it('messages.stream: streamRawPredict, assembled by the SDK', async () => {
    const message = await client()
      .messages.stream({ model: VERTEX_CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'vertex sdk stream' }] })
      .finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: vertex sdk stream' }])
    expect(mock.requests.at(-1)!.path).toMatch(/:streamRawPredict$/)
  })

  it('messages.countTokens: count-tokens:rawPredict', async () => {
    const count = await client().messages.countTokens({ model: VERTEX_CLAUDE, messages: [{ role: 'user', content: 'count me' }] })
    expect(count.input_tokens).toBeGreaterThan(0)
    expect(mock.requests.at(-1)!.path).toMatch(/publishers\/anthropic\/models\/count-tokens:rawPredict$/)
  })

  it('a token the endpoint never issued is refused with Google’s 401', async () => {
    const stranger = new OAuth2Client()
    stranger.setCredentials({ access_token: 'ya29.not-issued', expiry_date: Date.now() + 3_600_000 })
    const refused = new AnthropicVertex({
      region: 'us-central1',
      projectId: 'mock-project',
      baseURL: `${mock.url}/v1`,
      authClient: stranger,
      maxRetries: 0,
    })
    await expect(
      refused.messages.create({ model: VERTEX_CLAUDE, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 401,
    })
  })
})

describe('@google/genai with vertexai: true against the mock', () => {
  const client = () =>
    new GoogleGenAI({
      vertexai: true,
      project: 'mock-project',
      location: 'us-central1',
      apiVersion: 'v1',
      httpOptions: { baseUrl: mock.url },
      googleAuthOptions: { authClient },
    })

  it('models.generateContent', async () => {
    const res = await client().models.generateContent({ model: VERTEX_GEMINI, contents: 'genai vertex hello' })
    expect(res.text).toBe('Echo: genai vertex hello')
    expect(mock.requests.at(-1)!.path).toBe(
      '/v1/projects/mock-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    )
  })

  it('models.generateContentStream', async () => {
    let text = ''
    for await (const chunk of await client().models.generateContentStream({ model: VERTEX_GEMINI, contents: 'genai vertex stream' }))
      text += chunk.text ?? ''
    expect(text).toBe('Echo: genai vertex stream')
    expect(mock.requests.at(-1)!.path).toMatch(/:streamGenerateContent\?alt=sse$/)
  })

  it('models.countTokens', async () => {
    const res = await client().models.countTokens({ model: VERTEX_GEMINI, contents: 'count these' })
    expect(res.totalTokens).toBeGreaterThan(0)
  })

  it('the default API version (v1beta1) is served too', async () => {
    const beta = new GoogleGenAI({
      vertexai: true,
      project: 'mock-project',
      location: 'us-central1',
      httpOptions: { baseUrl: mock.url },
      googleAuthOptions: { authClient },
    })
    const res = await beta.models.generateContent({ model: VERTEX_GEMINI, contents: 'genai v1beta1' })
    expect(res.text).toBe('Echo: genai v1beta1')
    expect(mock.requests.at(-1)!.path).toMatch(/^\/v1beta1\/projects\/mock-project\//)
  })
})
