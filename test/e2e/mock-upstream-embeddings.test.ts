import { describe, expect, it } from 'vitest'
import { post, startExtra, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

const MODEL = 'gemini-embedding-001'
const EMBED = `/v1beta/models/${MODEL}:embedContent`
const BATCH = `/v1beta/models/${MODEL}:batchEmbedContents`
const COUNT = `/v1beta/models/${MODEL}:countTokens`
const content = (text: string) => ({ parts: [{ text }] })
const vector = (n: number) => Array.from({ length: n }, () => expect.any(Number))

describe('OpenAI /v1/embeddings', () => {
  it('answers one vector per input with usage, floats by default', async () => {
    const res = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['one', 'two'] })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: vector(8) },
        { object: 'embedding', index: 1, embedding: vector(8) },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    })
    expect(res.json.data[0].embedding).not.toEqual(res.json.data[1].embedding)
  })

  it('encodes base64 as little-endian float32 of the same vector, and honours dimensions', async () => {
    const floats = await post('/v1/embeddings', { model: 'm', input: 'same text', dimensions: 4 })
    const b64 = await post('/v1/embeddings', { model: 'm', input: 'same text', dimensions: 4, encoding_format: 'base64' })
    const bytes = Buffer.from(b64.json.data[0].embedding, 'base64')
    expect([...new Float32Array(bytes.buffer, bytes.byteOffset, 4)]).toEqual(floats.json.data[0].embedding)
  })

  it('refuses an unknown field, a missing model and an empty input, as OpenAI does', async () => {
    const unknown = await post('/v1/embeddings', { model: 'm', input: 'x', stream: true })
    expect(unknown.status).toBe(400)
    expect(unknown.json.error.message).toBe('Unrecognized request argument supplied: stream')
    expect((await post('/v1/embeddings', { input: 'x' })).status).toBe(400)
    expect((await post('/v1/embeddings', { model: 'm', input: '' })).json.error.message).toMatch(/'\$\.input' is invalid/)
  })

  it('asks for the key like the chat route', async () => {
    const keyed = await startExtra({ apiKey: 'sk-up' })
    const res = await post('/v1/embeddings', { model: 'm', input: 'x' }, {}, keyed.url)
    expect(res.status).toBe(401)
  })
})

describe('Gemini embedContent and batchEmbedContents', () => {
  it(':embedContent answers one embedding of outputDimensionality values, without usage', async () => {
    const res = await post(EMBED, { model: `models/${MODEL}`, content: content('hello'), outputDimensionality: 5 })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ embedding: { values: vector(5) } })
  })

  it(':batchEmbedContents answers one embedding per request, in order', async () => {
    const requests = ['a', 'b', 'a'].map((text) => ({ model: `models/${MODEL}`, content: content(text), taskType: 'RETRIEVAL_QUERY' }))
    const res = await post(BATCH, { requests })
    expect(res.status).toBe(200)
    const [a, b, again] = res.json.embeddings
    expect(a).toEqual({ values: vector(8) })
    expect(again).toEqual(a)
    expect(b).not.toEqual(a)
  })

  it('refuses a model in the body other than the path’s, as Google requires them to match', async () => {
    const single = await post(EMBED, { model: 'models/other', content: content('x') })
    expect(single.status).toBe(400)
    expect(single.json.error.status).toBe('INVALID_ARGUMENT')
    const batch = await post(BATCH, { requests: [{ model: `models/${MODEL}`, content: content('x') }, { content: content('y') }] })
    expect(batch.status).toBe(400)
    expect(batch.json.error.details[0].fieldViolations).toEqual([{ field: 'requests[1].model', description: expect.any(String) }])
  })

  it('refuses unknown fields, at the top and inside a request', async () => {
    const top = await post(EMBED, { content: content('x'), dimensions: 3 })
    expect(top.status).toBe(400)
    expect(top.json.error.message).toContain('Unknown name "dimensions"')
    const inner = await post(BATCH, { requests: [{ model: `models/${MODEL}`, content: content('x'), encoding: 'float' }] })
    expect(inner.json.error.message).toContain(`Unknown name "encoding" at 'requests[0]'`)
  })
})

describe('Gemini countTokens', () => {
  it('counts the contents', async () => {
    const res = await post(COUNT, { contents: [{ role: 'user', parts: [{ text: 'twelve chars' }] }] })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ totalTokens: 3, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 3 }] })
  })

  it('counts a generateContentRequest that names the path’s model, system instruction included', async () => {
    const generateContentRequest = {
      model: `models/${MODEL}`,
      contents: [{ parts: [{ text: 'abcd' }] }],
      systemInstruction: { parts: [{ text: 'efgh' }] },
    }
    expect((await post(COUNT, { generateContentRequest })).json.totalTokens).toBe(2)
    const other = await post(COUNT, { generateContentRequest: { ...generateContentRequest, model: 'models/x' } })
    expect(other.status).toBe(400)
  })

  it('refuses unknown fields and both forms at once', async () => {
    const unknown = await post(COUNT, { contents: [], generationConfig: {} })
    expect(unknown.json.error.message).toContain('Unknown name "generationConfig"')
    const both = await post(COUNT, { contents: [], generateContentRequest: { model: `models/${MODEL}`, contents: [] } })
    expect(both.status).toBe(400)
  })
})
