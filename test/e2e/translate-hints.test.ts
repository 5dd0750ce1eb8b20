import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { Gateway, GatewayOptions } from '../../src/types.js'
import { upstreamsOnOneMock } from '../support/every-dialect.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, listen, type MountedServer } from '../support/http.js'

// What real agents send that a target lacks or refuses: dropped and named (`x-model-gateway-dropped`), refused by
// name under `translation.strict`; and what a target model cannot take, lowered and named (`x-model-gateway-clamped`).

let mock: MockUpstream
const servers: { gateway: Gateway; server: MountedServer }[] = []
let lenient: string
let strict: string

async function start(options: Partial<GatewayOptions>): Promise<string> {
  const gateway = createGateway({
    upstreams: {
      ...upstreamsOnOneMock(mock.url, UPSTREAM_KEY),
      responses: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY, api: 'responses' },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'openai' },
      { id: 'gpt-5-codex', upstream: 'responses' },
      { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
      { id: 'gemini-2.5-flash', upstream: 'gemini' },
      { id: 'gemini-2.5-pro', upstream: 'gemini' },
    ],
    auth: { apiKeys: [KEY_A] },
    ...options,
  })
  const server = await listen(http.createServer(nodeHandler(gateway)))
  servers.push({ gateway, server })
  return server.url
}

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  lenient = await start({})
  strict = await start({ translation: { strict: true } })
})
afterAll(async () => {
  for (const { gateway, server } of servers) {
    await server.close()
    await gateway.close()
  }
  await mock.close()
})

/** The body the mock was sent for the call whose prompt holds `marker`. */
function sent(marker: string): Record<string, any> {
  const request = mock.requests.filter((r) => r.method === 'POST' && r.body.includes(marker)).at(-1)
  expect(request, `no upstream call carried ${marker}`).toBeDefined()
  return JSON.parse(request?.body ?? '{}')
}

/** What Gemini CLI sends on every call: top-k, thought summaries and a budget. */
function geminiCli(marker: string, generation: Record<string, unknown> = {}) {
  return {
    contents: [{ role: 'user', parts: [{ text: marker }] }],
    generationConfig: {
      temperature: 1,
      topP: 0.95,
      topK: 64,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 },
      ...generation,
    },
  }
}

const generate = (base: string, model: string, body: unknown) =>
  call(`${base}/v1beta/models/${model}:generateContent`, { headers: { 'x-goog-api-key': KEY_A }, body })

const messages = (base: string, body: unknown) =>
  call(`${base}/v1/messages`, { headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }, body })

describe('Gemini CLI’s generation settings on a model of another format', () => {
  it('toward chat completions: top-k and thought summaries are dropped and named; the rest is sent', async () => {
    const marker = 'hints gemini cli on chat'
    const res = await generate(lenient, 'gpt-4o-mini', geminiCli(marker))
    expect(res.status, res.text).toBe(200)
    expect(res.json.candidates[0].content.parts).toEqual([{ text: `Echo: ${marker}` }])
    expect(res.headers['x-model-gateway-dropped']).toBe('generationConfig.topK,generationConfig.thinkingConfig.includeThoughts')
    const body = sent(marker)
    expect(body).toMatchObject({ temperature: 1, top_p: 0.95, reasoning_effort: 'medium' })
    expect(body).not.toHaveProperty('top_k')
  })

  it('toward the Responses API: thought summaries become reasoning summaries; top-k is dropped and named', async () => {
    const marker = 'hints gemini cli on responses'
    const res = await generate(lenient, 'gpt-5-codex', geminiCli(marker))
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-dropped']).toBe('generationConfig.topK')
    expect(sent(marker).reasoning).toEqual({ effort: 'medium', summary: 'auto' })
  })

  it('toward Messages with thinking on: top-k and a temperature other than 1 are dropped and named; thinking shows as it is', async () => {
    const marker = 'hints gemini cli on messages'
    const res = await generate(lenient, 'claude-sonnet-4-5', geminiCli(marker, { temperature: 0.5, maxOutputTokens: 16384 }))
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-dropped']).toBe('generationConfig.topK,generationConfig.temperature')
    const body = sent(marker)
    expect(body).toMatchObject({ max_tokens: 16384, top_p: 0.95, thinking: { type: 'enabled', budget_tokens: 8192 } })
    expect(body).not.toHaveProperty('top_k')
    expect(body).not.toHaveProperty('temperature')
  })

  it('toward Messages without thinking: top-k and the temperature are sent; thought summaries, with none to show, are named', async () => {
    const marker = 'hints gemini cli on messages without thinking'
    const res = await generate(
      lenient,
      'claude-sonnet-4-5',
      geminiCli(marker, { temperature: 0.5, thinkingConfig: { includeThoughts: true } }),
    )
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-dropped']).toBe('generationConfig.thinkingConfig.includeThoughts')
    expect(sent(marker)).toMatchObject({ temperature: 0.5, top_k: 64 })
  })

  it.each([
    ['gpt-4o-mini', 'generationConfig.topK'],
    ['claude-sonnet-4-5', 'generationConfig.topK'],
  ])('under translation.strict, toward %s: refused, naming %s', async (model, field) => {
    const res = await generate(strict, model, geminiCli(`hints strict ${model}`))
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain(`'${field}'`)
  })

  it('under translation.strict, thought summaries toward chat completions are refused by name', async () => {
    const res = await generate(strict, 'gpt-4o-mini', geminiCli('hints strict summaries', { topK: undefined }))
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain("'generationConfig.thinkingConfig.includeThoughts'")
  })
})

describe('Claude Code’s requests on a Gemini model', () => {
  it('a tool with defer_loading goes as an ordinary tool, the field named', async () => {
    const marker = 'hints deferred tool'
    const res = await messages(lenient, {
      model: 'gemini-2.5-flash',
      max_tokens: 256,
      messages: [{ role: 'user', content: marker }],
      tools: [
        { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
        { name: 'Later', description: 'Found by tool search', input_schema: { type: 'object', properties: {} }, defer_loading: true },
      ],
    })
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-dropped']).toBe('tools[1].defer_loading')
    const declared = sent(marker).tools[0].functionDeclarations.map((fn: { name: string }) => fn.name)
    expect(declared).toEqual(['Bash', 'Later'])
  })

  it('a thinking budget above the model’s maximum is lowered to it and named', async () => {
    const marker = 'hints clamped budget'
    const res = await messages(lenient, {
      model: 'gemini-2.5-flash',
      max_tokens: 32000,
      thinking: { type: 'enabled', budget_tokens: 31999 },
      messages: [{ role: 'user', content: marker }],
    })
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-clamped']).toBe('thinking.budget_tokens=24576')
    expect(sent(marker).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576 })
  })

  it('a budget within the model’s maximum goes as it is, nothing named', async () => {
    const marker = 'hints budget within'
    const res = await messages(lenient, {
      model: 'gemini-2.5-pro',
      max_tokens: 32000,
      thinking: { type: 'enabled', budget_tokens: 31999 },
      messages: [{ role: 'user', content: marker }],
    })
    expect(res.status, res.text).toBe(200)
    expect(res.headers['x-model-gateway-clamped']).toBeUndefined()
    expect(sent(marker).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 31999 })
  })
})

describe('Anthropic token counting on a model of another format', () => {
  const countTokens = (model: string, marker: string) =>
    call(`${lenient}/v1/messages/count_tokens`, {
      headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: {
        model,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        thinking: { type: 'enabled', budget_tokens: 31999 },
        tools: [{ name: 'Later', description: 'Deferred', input_schema: { type: 'object', properties: {} }, defer_loading: true }],
        messages: [{ role: 'user', content: marker }],
      },
    })

  it('on a Gemini model: counted by Gemini’s countTokens, the whole request as it would be sent', async () => {
    const marker = 'hints count on gemini'
    const res = await countTokens('gemini-2.5-flash', marker)
    expect(res.status, res.text).toBe(200)
    expect(res.json).toEqual({ input_tokens: expect.any(Number) })
    expect(res.json.input_tokens).toBeGreaterThan(0)
    const request = mock.requests.filter((r) => r.body.includes(marker)).at(-1)
    expect(request?.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens')
    const body = JSON.parse(request?.body ?? '{}')
    expect(body.generateContentRequest).toMatchObject({
      model: 'models/gemini-2.5-flash',
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: marker }] }],
      tools: [{ functionDeclarations: [{ name: 'Later' }] }],
    })
  })

  it('on an OpenAI model, whatever its upstream’s api: counted by OpenAI’s input_tokens, counting fields only', async () => {
    for (const model of ['gpt-4o-mini', 'gpt-5-codex']) {
      const marker = `hints count on ${model}`
      const res = await countTokens(model, marker)
      expect(res.status, res.text).toBe(200)
      expect(res.json).toEqual({ input_tokens: expect.any(Number) })
      const request = mock.requests.filter((r) => r.body.includes(marker)).at(-1)
      expect(request?.path).toBe('/v1/responses/input_tokens')
      const sent = JSON.parse(request?.body ?? '{}')
      expect(sent).toMatchObject({ model, instructions: 'Be brief.', tools: [{ type: 'function', name: 'Later' }] })
      // The thinking budget asks for reasoning, which a message would also ask to get back encrypted: not a count.
      expect(sent.reasoning).toBeDefined()
      expect(Object.keys(sent)).not.toContain('include')
      expect(Object.keys(sent)).not.toContain('store')
    }
  })
})
