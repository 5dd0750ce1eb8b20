import { describe, expect, it } from 'vitest'
import { ownerOfKey } from '../../src/http/auth.js'
import { requestBodyHash } from '../../src/json/hash.js'
import type { UsageEvent } from '../../src/types.js'
import { EMBEDDING_MODELS } from '../support/embedding-models.js'
import { bearer, KEY_A, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { goog } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { ON_NODE_22, OPENAI_SDKS } from '../support/sdks.js'
import { describeOnce } from '../support/servers.js'

const JSON_TYPE = { 'content-type': 'application/json' }
const usages: UsageEvent[] = []
const onUsage = (u: UsageEvent) => usages.push(u)
const usageOf = (requestId: unknown) => usages.find((u) => u.requestId === requestId)

/** The Google GenAI SDK surface these scenarios use, in both majors. */
interface GenAIClient {
  models: {
    embedContent(params: { model: string; contents: unknown; config?: Record<string, unknown> }): Promise<{
      embeddings?: Array<{ values?: number[] }>
    }>
  }
}
type GenAIConstructor = new (options: { apiKey: string; httpOptions: { baseUrl: string } }) => GenAIClient

describeOnce('OpenAI embeddings: POST /v1/embeddings', (kind) => {
  const fx = useFixture(kind, { models: EMBEDDING_MODELS, onUsage })
  const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
  const embed = (body: unknown) => call(`${fx.url}/v1/embeddings`, { headers: { ...bearer(KEY_A), ...JSON_TYPE }, body })

  for (const [label, load] of OPENAI_SDKS) {
    it(`${label}: embeddings.create gets the vectors and usage, passed through from the model's OpenAI upstream`, async () => {
      const OpenAI = await load()
      const client = new OpenAI({ apiKey: KEY_A, baseURL: `${fx.url}/v1` })
      const marker = `sdk ${label}`
      const created = await client.embeddings.create({ model: 'gpt-4o-mini', input: [marker, `${marker} again`], dimensions: 4 })
      expect(created.data.map((d) => d.index)).toEqual([0, 1])
      expect(created.data[0]?.embedding).toHaveLength(4)
      expect(created.usage).toEqual({ prompt_tokens: expect.any(Number), total_tokens: created.usage.prompt_tokens })
      // The SDK asks for base64 and decodes it: the same numbers as the float answer of the same input.
      const floats = await embed({ model: 'gpt-4o-mini', input: [marker], dimensions: 4 })
      expect(created.data[0]?.embedding).toEqual(floats.json.data[0].embedding)
      const [first] = upstream(`"${marker}"`)
      expect(first?.path).toBe('/v1/embeddings')
      expect(first?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
      expect(JSON.parse(first?.body ?? '{}')).toMatchObject({ encoding_format: 'base64' })
    })
  }

  it('forwards the exact bytes and answers the upstream’s, reporting its usage to onUsage', async () => {
    const sent = '{ "input" : ["exact bytes", "two"],\n  "model":"gpt-4o-mini", "encoding_format":"float", "user":"u-1" }'
    const res = await embed(sent)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ object: 'list', model: 'gpt-4o-mini', usage: { prompt_tokens: 4, total_tokens: 4 } })
    expect(upstream('exact bytes')[0]?.body).toBe(sent)
    expect(usageOf(res.headers['x-request-id'])).toEqual({
      requestId: res.headers['x-request-id'],
      owner: ownerOfKey(KEY_A),
      model: 'gpt-4o-mini',
      endpoint: 'embeddings',
      input_tokens: 4,
      output_tokens: 0,
      total_tokens: 4,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      recovered: false,
      complete: true,
      upstream: 'mock',
      keyAlias: 'key-1',
    })
  })

  it('names the model as its upstream knows it, and nothing else changes', async () => {
    const sent = '{"model": "renamed", "input": "renamed input"}'
    expect((await embed(sent)).json.model).toBe('upstream-name')
    expect(upstream('renamed input')[0]?.body).toBe('{"model": "upstream-name", "input": "renamed input"}')
  })

  it('a model of a Gemini upstream is a 400 that says where to go instead, and nothing goes upstream', async () => {
    const res = await embed({ model: 'gemini-2.5-flash', input: 'cross format' })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'model' })
    expect(res.json.error.message).toContain('embeddings are not translated between formats')
    expect(res.json.error.message).toContain('POST /v1beta/models/gemini-2.5-flash:embedContent')
    expect(upstream('cross format')).toHaveLength(0)
  })

  it('checks model and input; an unknown model is a 404', async () => {
    expect((await embed({ model: 'gpt-4o-mini' })).json.error).toMatchObject({ code: 'invalid_request', param: 'input' })
    expect((await embed({ model: 'gpt-4o-mini', input: [] })).json.error.param).toBe('input')
    expect((await embed({ input: 'x' })).json.error.param).toBe('model')
    expect((await embed({ model: 'nope', input: 'x' })).status).toBe(404)
  })
})

describeOnce('Gemini embeddings: :embedContent and :batchEmbedContents', (kind) => {
  const fx = useFixture(kind, { models: EMBEDDING_MODELS, onUsage })
  const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
  const post = (path: string, body: unknown) => call(`${fx.url}${path}`, { headers: { ...goog(KEY_A), ...JSON_TYPE }, body })

  it(':embedContent forwards the exact bytes to the model’s Gemini upstream, under /v1beta and /v1', async () => {
    for (const version of ['v1beta', 'v1']) {
      const sent = `{"content": {"parts": [{"text": "${version} single"}]},  "outputDimensionality": 3}`
      const res = await post(`/${version}/models/gemini-2.5-flash:embedContent`, sent)
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ embedding: { values: [expect.any(Number), expect.any(Number), expect.any(Number)] } })
      const [request] = upstream(`${version} single`)
      expect(request?.path).toBe('/v1beta/models/gemini-2.5-flash:embedContent')
      expect(request?.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
      expect(request?.body).toBe(sent)
    }
  })

  it(':batchEmbedContents on a renamed model: the path and each request’s model name the upstream’s model', async () => {
    const sent = JSON.stringify({
      requests: ['batch one', 'batch two'].map((text) => ({ model: 'models/gem-embed', content: { parts: [{ text }] } })),
    })
    const res = await post('/v1beta/models/gem-embed:batchEmbedContents', sent)
    expect(res.status).toBe(200)
    expect(res.json.embeddings).toHaveLength(2)
    const [request] = upstream('batch one')
    expect(request?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
    expect(request?.body).toBe(sent.replaceAll('models/gem-embed', 'models/gemini-embedding-001'))
    // Gemini reports no usage for embeddings: the event says so with zeros.
    expect(usageOf(res.headers['x-request-id'])).toMatchObject({ endpoint: 'batchEmbedContents', model: 'gem-embed', total_tokens: 0 })
  })

  it('a model of an OpenAI upstream is a Google-shaped 400 that says where to go instead', async () => {
    for (const method of ['embedContent', 'batchEmbedContents']) {
      const res = await post(`/v1beta/models/gpt-4o-mini:${method}`, {
        requests: [{ content: { parts: [{ text: 'cross' }] } }],
        content: { parts: [{ text: 'cross' }] },
      })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
      expect(res.json.error.message).toContain('call POST /v1/embeddings for it')
    }
    expect(upstream('cross')).toHaveLength(0)
  })

  it('checks content and requests', async () => {
    const single = await post('/v1beta/models/gemini-2.5-flash:embedContent', { contents: [] })
    expect(single.status).toBe(400)
    expect(single.json.error.message).toContain("'content' must be an object")
    const batch = await post('/v1beta/models/gemini-2.5-flash:batchEmbedContents', { requests: [{ content: 'text' }] })
    expect(batch.json.error.message).toContain("'requests[0].content' must be an object")
  })

  function sdkScenarios(label: string, load: () => Promise<GenAIConstructor>) {
    it(`${label}: models.embedContent, one text and several, on a renamed model`, async () => {
      const GoogleGenAI = await load()
      const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
      const one = await client.models.embedContent({ model: 'gem-embed', contents: `${label} one`, config: { outputDimensionality: 4 } })
      expect(one.embeddings).toEqual([{ values: [expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number)] }])
      const many = await client.models.embedContent({ model: 'gem-embed', contents: [`${label} a`, `${label} b`] })
      expect(many.embeddings).toHaveLength(2)
      expect(many.embeddings?.[0]?.values).toHaveLength(8)
      const [request] = upstream(`${label} one`)
      expect(request?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
    })
  }

  sdkScenarios('genai 2', async () => (await import('@google/genai')).GoogleGenAI as unknown as GenAIConstructor)
  // @google/genai 3.x requires Node >= 22 (and calls /v1 by default).
  describe.skipIf(!ON_NODE_22)('Google GenAI SDK 3.x', () => {
    sdkScenarios('genai 3', async () => (await import('google-genai-v3')).GoogleGenAI as unknown as GenAIConstructor)
  })
})

describeOnce('Embeddings whose client left', (kind) => {
  const fx = useFixture(kind, { models: EMBEDDING_MODELS, onUsage })
  const calls = [
    {
      endpoint: 'embeddings',
      path: '/v1/embeddings',
      headers: bearer(KEY_A),
      body: { model: 'gpt-4o-mini', input: 'kept for later', mock: { delay_ms: 300 } },
      answer: (body: any) => expect(body.data[0].embedding).toHaveLength(8),
    },
    {
      endpoint: 'embedContent',
      path: '/v1beta/models/gemini-2.5-flash:embedContent',
      headers: goog(KEY_A),
      body: { content: { parts: [{ text: 'kept for later' }] }, mock: { delay_ms: 300 } },
      answer: (body: any) => expect(body.embedding.values).toHaveLength(8),
    },
  ]

  for (const c of calls) {
    it(`${c.endpoint}: the answer is kept as a recovery record, found by the body sent`, async () => {
      const sent = JSON.stringify(c.body)
      const before = fx.mock.completedCalls
      await sendThenAbort(`${fx.url}${c.path}`, { headers: c.headers, body: sent, afterMs: 30 })
      await fx.mock.waitFor(() => fx.mock.completedCalls > before)
      const lookup = async () => {
        const res = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: c.body })
        return res.json.items.length === 1 ? res.json.items[0] : undefined
      }
      const summary = await eventually(lookup)
      expect(summary).toMatchObject({ interrupted_reason: 'context canceled', request_body_hash: requestBodyHash(sent) })
      const detail = await call(`${fx.url}/v1/recoveries/${summary.request_id}`, { headers: bearer(KEY_A) })
      const model = c.body.model ?? 'gemini-2.5-flash'
      expect(detail.json.request).toEqual({
        body_raw: sent,
        request_body_hash: summary.request_body_hash,
        path: c.path,
        endpoint: c.endpoint,
        model,
      })
      expect(detail.json.response).toMatchObject({ status: 200, content_type: expect.stringMatching(/^application\/json/) })
      c.answer(JSON.parse(detail.json.response.body_raw))
      expect(usageOf(summary.request_id)).toMatchObject({ endpoint: c.endpoint, recovered: true })
      await call(`${fx.url}/v1/recoveries/${summary.request_id}`, { method: 'DELETE', headers: bearer(KEY_A) })
    })
  }
})

describeOnce('Embeddings and token counts on a model of an Anthropic upstream', (kind) => {
  const CLAUDE = 'claude-sonnet-4-6'
  // Nothing is sent upstream: the refusal comes first, so the upstream's address is never dialled.
  const fx = useFixture(kind, {
    upstreams: { claude: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9', apiKey: UPSTREAM_KEY } },
    models: [{ id: CLAUDE, upstream: 'claude' }],
  })
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    call(`${fx.url}${path}`, { headers: { ...headers, ...JSON_TYPE }, body })
  /** What a refusal must say of the model, and the route it must not send the client to. */
  const expectNoCircle = (message: string, notThere: string) => {
    expect(message).toContain(`The model '${CLAUDE}' is served by an Anthropic upstream`)
    expect(message).toContain(`The model '${CLAUDE}' serves POST /v1/chat/completions`)
    expect(message).toContain('POST /v1/messages')
    expect(message).not.toContain(`call ${notThere}`)
  }

  it('POST /v1/embeddings says what the model is and serves, not to call :embedContent', async () => {
    const res = await post('/v1/embeddings', bearer(KEY_A), { model: CLAUDE, input: 'x' })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe('model')
    expectNoCircle(res.json.error.message, 'POST /v1beta')
    expect(res.json.error.message).toContain('Anthropic upstreams have no route for embeddings')
  })

  it(':embedContent says so too, naming :countTokens among what the model serves (the Messages count counts it)', async () => {
    const embed = await post(`/v1beta/models/${CLAUDE}:embedContent`, goog(KEY_A), { content: { parts: [{ text: 'x' }] } })
    expect(embed.status).toBe(400)
    expectNoCircle(embed.json.error.message, 'POST /v1/embeddings')
    expect(embed.json.error.message).toContain(`POST /v1beta/models/${CLAUDE}:countTokens`)
  })
})
