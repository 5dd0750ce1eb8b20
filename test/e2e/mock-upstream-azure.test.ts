// Mock fidelity: openai's own AzureOpenAI client (and its OpenAI client on the v1 API) against the mock's Azure paths,
// so the mock is Azure's shape and not the gateway's: the deployments API with an api-key or an Entra ID token, the v1
// API, Azure's refusals of a wrong key, an expired token and a missing api-version, and its content filter.
import OpenAI, { AzureOpenAI } from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { call } from '../support/http.js'

const KEY = 'azure-test-key-0123456789'
const GOOD_TOKEN = 'entra-token-good'

/** A JWT (unsigned: the mock reads only `exp`) that expires `seconds` from now. */
const jwt = (seconds: number, id = 'x') =>
  ['{"alg":"none"}', JSON.stringify({ exp: Math.floor(Date.now() / 1000) + seconds, id })]
    .map((part) => Buffer.from(part).toString('base64url'))
    .join('.')
    .concat('.sig')

let mock: MockUpstream
beforeAll(async () => {
  mock = await startMockUpstream({ azure: { apiKey: KEY, acceptsToken: (token) => token === GOOD_TOKEN || token.startsWith('eyJ') } })
})
afterAll(() => mock.close())

const messages = [{ role: 'user' as const, content: 'ping' }]

describe('the mock as Azure OpenAI', () => {
  it('serves AzureOpenAI on the deployments API with an api-key, JSON and stream', async () => {
    const client = new AzureOpenAI({ endpoint: mock.url, apiKey: KEY, apiVersion: '2024-10-21', deployment: 'my-gpt', maxRetries: 0 })
    const answer = await client.chat.completions.create({ model: 'ignored', messages })
    expect(answer.choices[0]?.message.content).toBe('Echo: ping')
    const sent = mock.requests.at(-1)
    expect(sent?.path).toBe('/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21')
    expect(sent?.headers['api-key']).toBe(KEY)

    const stream = await client.chat.completions.create({ model: 'ignored', messages, stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('Echo: ping')
  })

  it('takes an Entra ID token from azureADTokenProvider as Bearer, and refuses a wrong one and an expired JWT', async () => {
    const client = (token: string) =>
      new AzureOpenAI({ endpoint: mock.url, azureADTokenProvider: async () => token, apiVersion: '2024-10-21', maxRetries: 0 })
    const answer = await client(GOOD_TOKEN).chat.completions.create({ model: 'dep-1', messages })
    expect(answer.choices[0]?.message.content).toBe('Echo: ping')
    expect(mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${GOOD_TOKEN}`)
    expect(mock.requests.at(-1)?.path).toBe('/openai/deployments/dep-1/chat/completions?api-version=2024-10-21')
    expect((await client(jwt(600)).chat.completions.create({ model: 'dep-1', messages })).choices).toHaveLength(1)

    for (const token of ['entra-token-wrong', jwt(-60)]) {
      const refused = await client(token)
        .chat.completions.create({ model: 'dep-1', messages })
        .catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError)
      expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).message).toContain('Access token is missing, invalid')
    }
  })

  it('refuses a wrong api-key as Azure does, and a deployments call without an api-version', async () => {
    const wrong = new AzureOpenAI({ endpoint: mock.url, apiKey: 'not-it', apiVersion: '2024-10-21', maxRetries: 0 })
    const refused = await wrong.chat.completions.create({ model: 'dep', messages }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError)
    expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({ code: '401' })

    const unversioned = await call(`${mock.url}/openai/deployments/dep/chat/completions`, {
      headers: { 'api-key': KEY },
      body: { messages },
    })
    expect(unversioned.status).toBe(404)
    expect(unversioned.json).toEqual({ error: { code: '404', message: 'Resource not found' } })
    const badVersion = await call(`${mock.url}/openai/deployments/dep/chat/completions?api-version=v9`, {
      headers: { 'api-key': KEY },
      body: { messages },
    })
    expect(badVersion.status).toBe(400)
  })

  it('serves the v1 API to the OpenAI client (the key as Bearer) and to an api-key: chat, Responses, embeddings', async () => {
    const client = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: KEY, maxRetries: 0 })
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
    expect(answer.model).toBe('gpt-4o-mini')
    expect(mock.requests.at(-1)?.path).toBe('/openai/v1/chat/completions')
    const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'ping' })
    expect(response.output_text).toBe('Echo: ping')
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'ping' })
    expect(embedding.data[0]?.embedding.length).toBeGreaterThan(0)
    const byKey = await call(`${mock.url}/openai/v1/chat/completions`, { headers: { 'api-key': KEY }, body: { model: 'm', messages } })
    expect(byKey.status).toBe(200)
    const wrong = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'nope', maxRetries: 0 })
    await expect(wrong.chat.completions.create({ model: 'm', messages })).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
  })

  it("answers its content filter's refusal of a prompt and its cut of an answer as Azure does", async () => {
    const client = new AzureOpenAI({ endpoint: mock.url, apiKey: KEY, apiVersion: '2024-10-21', maxRetries: 0 })
    const refused = await client.chat.completions
      .create({ model: 'dep', messages, mock: { content_filter: 'prompt' } } as never)
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    const error = (refused as InstanceType<typeof OpenAI.BadRequestError>).error as Record<string, any>
    expect(error.code).toBe('content_filter')
    expect(error.innererror.content_filter_result.violence).toEqual({ filtered: true, severity: 'medium' })

    const cut = await client.chat.completions.create({ model: 'dep', messages, mock: { content_filter: 'completion' } } as never)
    expect(cut.choices[0]?.finish_reason).toBe('content_filter')
    const stream = await client.chat.completions.create({
      model: 'dep',
      messages,
      stream: true,
      mock: { content_filter: 'completion' },
    } as never)
    const reasons: unknown[] = []
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>)
      reasons.push(...chunk.choices.map((c) => c.finish_reason))
    expect(reasons).toContain('content_filter')
  })
})
