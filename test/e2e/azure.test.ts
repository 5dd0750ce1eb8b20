// Every client dialect through the gateway to an Azure OpenAI upstream (the mock's Azure paths, which check the
// api-key): JSON and stream, tools, an upstream error, Azure's content filter, and the v1 against the deployments URLs.
import diagnosticsChannel from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayChannels } from '../../src/observe/channels.js'
import { AZURE_KEY, type AzureChain, CLIENTS, startAzureChain } from '../support/azure.js'
import { KEY_A } from '../support/fixture.js'
import { call } from '../support/http.js'

let chain: AzureChain
beforeAll(async () => {
  chain = await startAzureChain(
    (mockUrl) => ({
      az: { type: 'azure', baseUrl: `${mockUrl}/openai/v1`, apiKey: AZURE_KEY },
      dep: { type: 'azure', baseUrl: `${mockUrl}/openai/v1`, apiKey: AZURE_KEY, apiVersion: '2024-10-21' },
      azr: { type: 'azure', baseUrl: `${mockUrl}/openai/v1`, apiKey: AZURE_KEY, api: 'responses' },
    }),
    [
      { id: 'gpt-az', upstream: 'az', upstreamModel: 'gpt-4o-mini' },
      { id: 'gpt-dep', upstream: 'dep', upstreamModel: 'my-deployment' },
      { id: 'embed-az', upstream: 'az', upstreamModel: 'text-embedding-3-small' },
      { id: 'embed-dep', upstream: 'dep', upstreamModel: 'embed-deployment' },
      { id: 'gpt-azr', upstream: 'azr', upstreamModel: 'gpt-4o-mini' },
    ],
  )
})
afterAll(() => chain.close())

const last = () => chain.mock.requests.at(-1)

describe.each(CLIENTS)('$name client → Azure upstream', (client) => {
  it('answers JSON, with the api-key sent as Azure takes it and no other credential', async () => {
    const res = await client.ask(chain.url, 'gpt-az')
    expect(res.status).toBe(200)
    expect(client.text(res)).toBe('Echo: ping')
    const sent = last()
    expect(sent?.headers['api-key']).toBe(AZURE_KEY)
    expect(sent?.headers.authorization).toBeUndefined()
    expect(sent?.path).toMatch(/^\/openai\/v1\/(chat\/completions|responses)$/)
    expect(JSON.parse(sent?.body ?? '{}').model).toBe('gpt-4o-mini')
  })

  it('streams', async () => {
    const res = await client.ask(chain.url, 'gpt-az', { stream: true })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(client.text(res)).toBe('Echo: ping')
  })

  it('calls a tool', async () => {
    const res = await client.ask(chain.url, 'gpt-az', { tool: true })
    expect(res.status).toBe(200)
    expect(client.toolCall(res)).toBe('get_weather')
  })

  it("gets an upstream's 429 as its own format's error", async () => {
    chain.mock.steer('[rate-limited]', { status: 429 })
    const res = await client.ask(chain.url, 'gpt-az', { text: 'hello [rate-limited]' })
    chain.mock.steer('[rate-limited]', undefined)
    expect(res.status).toBe(429)
    expect(client.errorMessage(res)).toEqual(expect.any(String))
  })

  it("gets Azure's content-filter refusal of a prompt with its reason", async () => {
    chain.mock.steer('[filtered-prompt]', { content_filter: 'prompt' })
    const res = await client.ask(chain.url, 'gpt-az', { text: 'something violent [filtered-prompt]' })
    chain.mock.steer('[filtered-prompt]', undefined)
    expect(res.status).toBe(400)
    expect(client.errorMessage(res)).toContain("Azure OpenAI's content management policy")
    if (client.name.startsWith('OpenAI')) {
      // Passthrough: Azure's own error, its verdicts and all.
      expect(res.json.error.code).toBe('content_filter')
      expect(res.json.error.innererror.content_filter_result.violence).toEqual({ filtered: true, severity: 'medium' })
    } else {
      expect(client.errorMessage(res)).toContain('[Azure content filter: violence (medium)]')
    }
  })
})

describe("Azure's content filter cutting an answer", () => {
  const cut = async (ask: () => Promise<import('../support/http.js').TestResponse>) => {
    chain.mock.steer('[filtered-answer]', { content_filter: 'completion' })
    try {
      return await ask()
    } finally {
      chain.mock.steer('[filtered-answer]', undefined)
    }
  }
  const text = 'tell me [filtered-answer]'
  const [chat, , gemini, anthropic] = CLIENTS as [
    (typeof CLIENTS)[number],
    (typeof CLIENTS)[number],
    (typeof CLIENTS)[number],
    (typeof CLIENTS)[number],
  ]

  it('reaches each format as its own word for it: content_filter, SAFETY, refusal', async () => {
    expect((await cut(() => chat.ask(chain.url, 'gpt-az', { text }))).json.choices[0].finish_reason).toBe('content_filter')
    expect((await cut(() => gemini.ask(chain.url, 'gpt-az', { text }))).json.candidates[0].finishReason).toBe('SAFETY')
    expect((await cut(() => anthropic.ask(chain.url, 'gpt-az', { text }))).json.stop_reason).toBe('refusal')
  })

  it('in a stream too, past the first chunk Azure sends with no choice', async () => {
    const streamed = await cut(() => gemini.ask(chain.url, 'gpt-az', { text, stream: true }))
    expect(streamed.status).toBe(200)
    expect(streamed.text).toContain('"finishReason":"SAFETY"')
    const messages = await cut(() => anthropic.ask(chain.url, 'gpt-az', { text, stream: true }))
    expect(messages.text).toContain('"stop_reason":"refusal"')
  })
})

describe('the v1 API and the deployments API', () => {
  it('names the model in the body under …/openai/v1 without apiVersion, in the path with it', async () => {
    const [chat, responses, gemini] = CLIENTS as [(typeof CLIENTS)[number], (typeof CLIENTS)[number], (typeof CLIENTS)[number]]
    expect((await chat.ask(chain.url, 'gpt-az')).status).toBe(200)
    expect(last()?.path).toBe('/openai/v1/chat/completions')
    expect((await chat.ask(chain.url, 'gpt-dep')).status).toBe(200)
    expect(last()?.path).toBe('/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21')
    expect((await gemini.ask(chain.url, 'gpt-dep')).status).toBe(200)
    expect(last()?.path).toBe('/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21')
    expect((await responses.ask(chain.url, 'gpt-dep')).status).toBe(200)
    expect(last()?.path).toBe('/openai/responses?api-version=2024-10-21')
    expect(JSON.parse(last()?.body ?? '{}').model).toBe('my-deployment')
    // api: 'responses' sends translated calls to Azure's Responses API.
    const viaResponses = await gemini.ask(chain.url, 'gpt-azr')
    expect(gemini.text(viaResponses)).toBe('Echo: ping')
    expect(last()?.path).toBe('/openai/v1/responses')
    chain.mock.steer('[filtered-prompt]', { content_filter: 'prompt' })
    const filtered = await gemini.ask(chain.url, 'gpt-azr', { text: 'violent [filtered-prompt]' })
    chain.mock.steer('[filtered-prompt]', undefined)
    expect(filtered.status).toBe(400)
    expect(gemini.errorMessage(filtered)).toContain('[Azure content filter: violence (medium)]')
  })

  it('serves embeddings on both', async () => {
    const embed = (model: string) =>
      call(`${chain.url}/v1/embeddings`, { headers: { authorization: `Bearer ${KEY_A}` }, body: { model, input: 'ping' } })
    const v1 = await embed('embed-az')
    expect(v1.status).toBe(200)
    expect(v1.json.data[0].embedding.length).toBeGreaterThan(0)
    expect(last()?.path).toBe('/openai/v1/embeddings')
    expect((await embed('embed-dep')).status).toBe(200)
    expect(last()?.path).toBe('/openai/deployments/embed-deployment/embeddings?api-version=2024-10-21')
  })

  it('reports azure.ai.openai as the provider, and lists the models to every client', async () => {
    const providers: unknown[] = []
    const listen = (message: unknown) => providers.push((message as { provider?: unknown }).provider)
    diagnosticsChannel.subscribe(gatewayChannels.callStart, listen)
    try {
      await (CLIENTS[0] as (typeof CLIENTS)[number]).ask(chain.url, 'gpt-az')
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.callStart, listen)
    }
    expect(providers).toEqual(['azure.ai.openai'])
    const models = await call(`${chain.url}/v1/models`, { headers: { authorization: `Bearer ${KEY_A}` } })
    expect(models.json.data.map((m: { id: string }) => m.id)).toEqual(['gpt-az', 'gpt-dep', 'embed-az', 'embed-dep', 'gpt-azr'])
  })
})
