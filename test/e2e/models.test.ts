import { expect, it } from 'vitest'
import { geminiBody } from '../support/bodies.js'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { goog } from '../support/gemini.js'
import { call } from '../support/http.js'
import { ON_NODE_22 } from '../support/sdks.js'
import { describeOnce } from '../support/servers.js'

const CONFIGURED = ['gpt-4o-mini', 'renamed', 'gemini-2.5-flash']

describeOnce('Models in both formats', (kind) => {
  const fx = useFixture(kind)

  it('GET /v1/models/{id} answers the OpenAI model object', async () => {
    const res = await call(`${fx.url}/v1/models/renamed`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ id: 'renamed', object: 'model', created: 1700000001, owned_by: 'acme' })
  })

  it('GET /v1/models/{id} of an unknown model is a 404 in the OpenAI shape', async () => {
    const res = await call(`${fx.url}/v1/models/o9-nonexistent`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(404)
    expect(res.json.error).toMatchObject({ code: 'model_not_found', param: 'model' })
  })

  it('GET /v1beta/models lists every configured model in Google’s shape', async () => {
    const res = await call(`${fx.url}/v1beta/models`, { headers: goog(KEY_A) })
    expect(res.status).toBe(200)
    expect(res.json.models.map((m: { name: string }) => m.name)).toEqual(CONFIGURED.map((id) => `models/${id}`))
    expect(res.json.models[0].supportedGenerationMethods).toContain('generateContent')
  })

  it('lists the methods each model serves: all five on a Gemini upstream, generate-content and the count elsewhere', async () => {
    const all = ['generateContent', 'streamGenerateContent', 'embedContent', 'batchEmbedContents', 'countTokens']
    // Translated, and the count by the upstream's own counting method.
    const translated = ['generateContent', 'streamGenerateContent', 'countTokens']
    const methods = { 'gpt-4o-mini': translated, renamed: translated, 'gemini-2.5-flash': all }
    for (const path of ['/v1beta/models', '/v1/models']) {
      const res = await call(`${fx.url}${path}`, { headers: goog(KEY_A) })
      const listed = Object.fromEntries(
        res.json.models.map((m: { baseModelId: string; supportedGenerationMethods: string[] }) => [
          m.baseModelId,
          m.supportedGenerationMethods,
        ]),
      )
      expect(listed, path).toEqual(methods)
    }
    for (const [id, expected] of Object.entries(methods)) {
      const one = await call(`${fx.url}/v1beta/models/${id}`, { headers: goog(KEY_A) })
      expect(one.json.supportedGenerationMethods, id).toEqual(expected)
    }
    // What a model lists, it serves: a model of another upstream refuses embeddings, and counts tokens its own way.
    const refused = await call(`${fx.url}/v1beta/models/gpt-4o-mini:embedContent`, {
      headers: goog(KEY_A),
      body: { content: { parts: [{ text: 'x' }] } },
    })
    expect(refused.status).toBe(400)
    for (const id of ['gpt-4o-mini', 'gemini-2.5-flash']) {
      const counted = await call(`${fx.url}/v1beta/models/${id}:countTokens`, { headers: goog(KEY_A), body: geminiBody() })
      expect(counted.status, id).toBe(200)
    }
  })

  it('GET /v1beta/models/{id} answers one model, and a Google-shaped 404 for an unknown one', async () => {
    const found = await call(`${fx.url}/v1beta/models/gemini-2.5-flash`, { headers: goog(KEY_A) })
    expect(found.json).toMatchObject({ name: 'models/gemini-2.5-flash', displayName: 'gemini-2.5-flash' })
    const missing = await call(`${fx.url}/v1beta/models/nope`, { headers: goog(KEY_A) })
    expect(missing.status).toBe(404)
    expect(missing.json.error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
  })

  it('GET /v1/models answers a Google client (x-goog-api-key or x-goog-api-client) in Google’s shape, everyone else in OpenAI’s', async () => {
    const google = await call(`${fx.url}/v1/models`, { headers: goog(KEY_A) })
    expect(google.json.models).toHaveLength(CONFIGURED.length)
    const announced = await call(`${fx.url}/v1/models`, { headers: { 'x-goog-api-client': 'google-genai-sdk/1.0 gl-node/24' } })
    expect(announced.json.models).toHaveLength(CONFIGURED.length)
    const openai = await call(`${fx.url}/v1/models`, { headers: bearer(KEY_A) })
    expect(openai.json.object).toBe('list')
    expect(openai.json.data.map((m: { id: string }) => m.id)).toEqual(CONFIGURED)
  })

  it('the openai SDK retrieves a model', async () => {
    const OpenAI = (await import('openai')).default
    const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A })
    const model = await client.models.retrieve('gpt-4o-mini')
    expect(model).toMatchObject({ id: 'gpt-4o-mini', object: 'model', owned_by: 'mock' })
  })

  it('the Google GenAI SDK 2.x lists and gets the configured models', async () => {
    const { GoogleGenAI } = await import('@google/genai')
    const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
    const names: string[] = []
    for await (const model of await client.models.list()) names.push(String(model.name))
    expect(names).toEqual(CONFIGURED.map((id) => `models/${id}`))
    const one = await client.models.get({ model: 'gemini-2.5-flash' })
    expect(one.name).toBe('models/gemini-2.5-flash')
  })

  it.runIf(ON_NODE_22)('the Google GenAI SDK 3.x lists the configured models (it asks /v1/models)', async () => {
    const { GoogleGenAI } = await import('google-genai-v3')
    const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
    const names: string[] = []
    for await (const model of await client.models.list()) names.push(String(model.name))
    expect(names).toEqual(CONFIGURED.map((id) => `models/${id}`))
  })
})

describeOnce('404s that say what is served', (kind) => {
  const fx = useFixture(kind)

  it('names the path, the routes served and the likely mistake (a base URL without /v1)', async () => {
    const res = await call(`${fx.url}/chat/completions`, { headers: bearer(KEY_A), body: { model: 'gpt-4o-mini' } })
    expect(res.status).toBe(404)
    expect(res.json.error.code).toBe('not_found')
    expect(res.json.error.message).toContain('Unknown path /chat/completions.')
    expect(res.json.error.message).toContain('POST /v1/chat/completions')
    expect(res.json.error.message).toContain('Is the base URL missing /v1?')
  })

  it('lists the embedding and token-counting routes, and spots their base URL without /v1', async () => {
    const res = await call(`${fx.url}/embeddings`, { headers: bearer(KEY_A), body: { model: 'gpt-4o-mini', input: 'x' } })
    expect(res.status).toBe(404)
    for (const route of [
      'POST /v1/embeddings',
      'POST /v1beta/models/{model}:embedContent',
      'POST /v1beta/models/{model}:batchEmbedContents',
      'POST /v1beta/models/{model}:countTokens',
    ]) {
      expect(res.json.error.message).toContain(route)
    }
    expect(res.json.error.message).toContain('Is the base URL missing /v1?')
  })

  it('spots a version twice (base URL ending in /v1 and a path starting with it)', async () => {
    const res = await call(`${fx.url}/v1/v1/chat/completions`, { headers: bearer(KEY_A), body: {} })
    expect(res.status).toBe(404)
    expect(res.json.error.message).toContain('start with it again')
  })

  it('echoes at most 200 characters of the path', async () => {
    const res = await call(`${fx.url}/v1/${'x'.repeat(5000)}`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(404)
    // The path is cut after 200 characters (the list of what is served follows, as long as the registry makes it).
    const message: string = res.json.error.message
    expect(message).toContain(`/v1/${'x'.repeat(196)}…`)
    expect(message).not.toContain('x'.repeat(197))
  })
})
