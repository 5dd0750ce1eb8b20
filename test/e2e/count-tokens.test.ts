import Anthropic from '@anthropic-ai/sdk'
import Keyv from 'keyv'
import { describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { EMBEDDING_MODELS } from '../support/embedding-models.js'
import { KEY_A, startFixture, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { goog } from '../support/gemini.js'
import { call, sendThenAbort } from '../support/http.js'
import { ON_NODE_22 } from '../support/sdks.js'
import { describeOnce, serve } from '../support/servers.js'

/** The Google GenAI SDK surface these scenarios use, in both majors. */
interface GenAIClient {
  models: { countTokens(params: { model: string; contents: unknown }): Promise<{ totalTokens?: number }> }
}
type GenAIConstructor = new (options: { apiKey: string; httpOptions: { baseUrl: string } }) => GenAIClient

const headers = { ...goog(KEY_A), 'content-type': 'application/json' }

describeOnce('Gemini countTokens: POST …/models/{model}:countTokens', (kind) => {
  const fx = useFixture(kind, { models: EMBEDDING_MODELS })
  const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
  const count = (model: string, body: unknown, version = 'v1beta') =>
    call(`${fx.url}/${version}/models/${model}:countTokens`, { headers, body })

  it('forwards the exact bytes to the model’s Gemini upstream and answers its count, under /v1beta and /v1', async () => {
    for (const version of ['v1beta', 'v1']) {
      const sent = `{"contents": [{"parts": [{"text": "${version} sixteen chars"}]}]}`
      const res = await count('gemini-2.5-flash', sent, version)
      expect(res.status).toBe(200)
      expect(res.json).toEqual({
        totalTokens: expect.any(Number),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: res.json.totalTokens }],
      })
      const [request] = upstream(`${version} sixteen chars`)
      expect(request?.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens')
      expect(request?.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
      expect(request?.body).toBe(sent)
    }
  })

  it('a generateContentRequest names the model as its upstream knows it', async () => {
    const sent = '{"generateContentRequest": {"model": "models/gem-embed", "contents": [{"parts": [{"text": "whole request"}]}]}}'
    const res = await count('gem-embed', sent)
    expect(res.status).toBe(200)
    const [request] = upstream('whole request')
    expect(request?.path).toBe('/v1beta/models/gemini-embedding-001:countTokens')
    expect(request?.body).toBe(sent.replace('models/gem-embed', 'models/gemini-embedding-001'))
  })

  it('a model of an OpenAI upstream is counted by its POST /v1/responses/input_tokens', async () => {
    const res = await count('gpt-4o-mini', { contents: [{ parts: [{ text: 'counted by openai' }] }] })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ totalTokens: Math.ceil('counted by openai'.length / 4) })
    expect(upstream('counted by openai').map((r) => r.path)).toEqual(['/v1/responses/input_tokens'])
  })

  it('needs contents or a generateContentRequest', async () => {
    const res = await count('gemini-2.5-flash', { content: {} })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain("'contents' (an array) or 'generateContentRequest' is required")
  })

  function sdkScenarios(label: string, load: () => Promise<GenAIConstructor>) {
    it(`${label}: models.countTokens counts on a Gemini model, and on an OpenAI one by its counting endpoint`, async () => {
      const GoogleGenAI = await load()
      const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
      const counted = await client.models.countTokens({ model: 'gemini-2.5-flash', contents: `${label} twelve.` })
      expect(counted.totalTokens).toBe(Math.ceil(`${label} twelve.`.length / 4))
      const translated = await client.models.countTokens({ model: 'gpt-4o-mini', contents: `${label} on openai.` })
      expect(translated.totalTokens).toBe(Math.ceil(`${label} on openai.`.length / 4))
    })
  }

  sdkScenarios('genai 2', async () => (await import('@google/genai')).GoogleGenAI as unknown as GenAIConstructor)
  // @google/genai 3.x requires Node >= 22 (and calls /v1 by default).
  describe.skipIf(!ON_NODE_22)('Google GenAI SDK 3.x', () => {
    sdkScenarios('genai 3', async () => (await import('google-genai-v3')).GoogleGenAI as unknown as GenAIConstructor)
  })
})

describeOnce('Anthropic messages.countTokens on a model of an OpenAI upstream', (kind) => {
  const fx = useFixture(kind)
  const tools = [
    { name: 'lookup', description: 'Looks a word up', input_schema: { type: 'object' as const, properties: { q: { type: 'string' } } } },
  ]

  it('is counted by POST /v1/responses/input_tokens, the request written as the Responses request it would be', async () => {
    const sdk = new Anthropic({ apiKey: KEY_A, baseURL: fx.url, maxRetries: 0 })
    const marker = 'count me on openai'
    const counted = await sdk.messages.countTokens({
      model: 'gpt-4o-mini',
      system: 'Be brief.',
      tools,
      messages: [{ role: 'user', content: marker }],
    })
    const requests = fx.mock.requests.filter((r) => r.body.includes(marker))
    expect(requests).toHaveLength(1)
    expect(requests[0]?.path).toBe('/v1/responses/input_tokens')
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    const sent = JSON.parse(requests[0]?.body ?? '{}')
    // Only what the counting endpoint takes: no store, stream or max_output_tokens, which it refuses.
    expect(sent).toEqual({
      model: 'gpt-4o-mini',
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: marker }] }],
      tools: [{ type: 'function', name: 'lookup', description: 'Looks a word up', parameters: tools[0]?.input_schema, strict: false }],
    })
    // The mock counts a token per four characters of the instructions, the input's text and the tools' JSON.
    const expected = Math.ceil(('Be brief.'.length + marker.length + JSON.stringify(sent.tools).length) / 4)
    expect(counted).toEqual({ input_tokens: expected })
  })

  it('an OpenAI-compatible server without the endpoint: its 404 comes back as an Anthropic NotFoundError', async () => {
    const paths: string[] = []
    const bare = await serve((req, res) => {
      paths.push(`${req.method} ${req.url}`)
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}')
    })
    const own = await startFixture(kind, {
      upstreams: { bare: { type: 'openai', baseUrl: `${bare.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'local-llm', upstream: 'bare' }],
    })
    try {
      const sdk = new Anthropic({ apiKey: KEY_A, baseURL: own.url, maxRetries: 0 })
      const counted = sdk.messages.countTokens({ model: 'local-llm', messages: [{ role: 'user', content: 'x' }] })
      await expect(counted).rejects.toBeInstanceOf(Anthropic.NotFoundError)
      expect(paths).toEqual(['POST /v1/responses/input_tokens'])
    } finally {
      await own.close()
      await bare.close()
    }
  })
})

describeOnce('countTokens whose client left', (kind) => {
  it('keeps no record (counting is free: the client asks again), and reports the call with zero tokens', async () => {
    const map = new Map()
    const usages: UsageEvent[] = []
    const own = await startFixture(kind, { store: new Keyv({ store: map }), onUsage: (u) => usages.push(u) })
    try {
      const body = JSON.stringify({ contents: [{ parts: [{ text: 'left early' }] }], mock: { delay_ms: 200 } })
      await sendThenAbort(`${own.url}/v1beta/models/gemini-2.5-flash:countTokens`, { headers: goog(KEY_A), body, afterMs: 30 })
      await own.mock.waitFor(() => own.mock.completedCalls > 0)
      // close() drains the call: anything it was going to store is stored by then.
      await own.gateway.close()
      expect(map.size).toBe(0)
      expect(usages).toEqual([expect.objectContaining({ endpoint: 'countTokens', total_tokens: 0, recovered: false })])
      expect(own.logs.filter((l) => l.level === 'info')).toEqual([])
    } finally {
      await own.close()
    }
  })
})
