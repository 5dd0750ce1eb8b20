import diagnosticsChannel from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { gatewayChannels } from '../../src/observe/channels.js'
import { startMockUpstream } from '../../src/testing/index.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents, sseEvents } from '../support/sse-client.js'
import { startVertexFixture, VERTEX_CLAUDE, VERTEX_GEMINI, type VertexFixture } from '../support/vertex.js'

// Every client dialect (OpenAI chat and Responses, Gemini, Anthropic) to a Vertex AI upstream's Gemini model and its
// Claude model, on the mock's Vertex paths with a token from its token endpoint: whole and streamed answers, tools,
// errors, token counts, and the gateway's promises (resumed streams, joined retries, background responses).

const CLAUDE_HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const GOOGLE_HEADERS = { 'x-goog-api-key': KEY_A }
const MODELS = { gemini: VERTEX_GEMINI, claude: 'claude-sonnet-4-5' } as const
type Target = keyof typeof MODELS

/** The Vertex path each model's calls reach. */
const PATHS: Record<Target, { whole: RegExp; stream: RegExp }> = {
  gemini: {
    whole: /^\/v1\/projects\/mock-project\/locations\/us-central1\/publishers\/google\/models\/gemini-2\.5-flash:generateContent$/,
    stream:
      /^\/v1\/projects\/mock-project\/locations\/us-central1\/publishers\/google\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/,
  },
  claude: {
    whole: /^\/v1\/projects\/mock-project\/locations\/us-central1\/publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:rawPredict$/,
    stream:
      /^\/v1\/projects\/mock-project\/locations\/us-central1\/publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:streamRawPredict$/,
  },
}

/** One client dialect: how it asks for a model call, and where its answer's text is. */
interface Client {
  name: string
  request(model: string, text: string, stream: boolean): { path: string; headers: Record<string, string>; body: unknown }
  text(json: any): string
  /** Whether an error body is this dialect's. */
  isError(json: any): boolean
}

const CLIENTS: Client[] = [
  {
    name: 'OpenAI chat',
    request: (model, text, stream) => ({
      path: '/v1/chat/completions',
      headers: bearer(KEY_A),
      body: { model, stream, messages: [{ role: 'user', content: text }] },
    }),
    text: (json) => json.choices[0].message.content,
    isError: (json) => typeof json.error?.message === 'string' && 'type' in json.error,
  },
  {
    name: 'OpenAI Responses',
    request: (model, text, stream) => ({ path: '/v1/responses', headers: bearer(KEY_A), body: { model, stream, input: text } }),
    text: (json) => json.output.find((item: any) => item.type === 'message').content[0].text,
    isError: (json) => typeof json.error?.message === 'string',
  },
  {
    name: 'Gemini',
    request: (model, text, stream) => ({
      path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      headers: GOOGLE_HEADERS,
      body: { contents: [{ role: 'user', parts: [{ text }] }] },
    }),
    text: (json) => json.candidates[0].content.parts[0].text,
    isError: (json) => typeof json.error?.status === 'string' && typeof json.error?.code === 'number',
  },
  {
    name: 'Anthropic',
    request: (model, text, stream) => ({
      path: '/v1/messages',
      headers: CLAUDE_HEADERS,
      body: { model, stream, max_tokens: 256, messages: [{ role: 'user', content: text }] },
    }),
    text: (json) => json.content[0].text,
    isError: (json) => json.type === 'error' && typeof json.error?.type === 'string',
  },
]

let fx: VertexFixture
beforeAll(async () => {
  fx = await startVertexFixture({ gateway: { recovery: { streams: 'finish' } } })
})
afterAll(() => fx.close())

const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
let n = 0
const markerFor = (what: string) => `${what} ${++n}`

describe.each(CLIENTS)('$name client × Vertex AI', (client) => {
  describe.each(['gemini', 'claude'] as const)('%s model', (target) => {
    it('a whole answer, from the Vertex path with the token the token endpoint issued', async () => {
      const marker = markerFor(`whole ${client.name} ${target}`)
      const { path, headers, body } = client.request(MODELS[target], marker, false)
      const res = await call(`${fx.url}${path}`, { headers, body })
      expect(res.status).toBe(200)
      expect(client.text(res.json)).toBe(`Echo: ${marker}`)
      const [sent] = upstreamCalls(marker)
      expect(sent?.path).toMatch(PATHS[target].whole)
      expect(sent?.headers.authorization).toMatch(/^Bearer ya29\.mock-/)
      // Never the client's key, never a key header of another API.
      expect(JSON.stringify(sent?.headers)).not.toContain(KEY_A)
      if (target === 'claude') {
        const sentBody = JSON.parse(sent!.body)
        expect(sentBody.anthropic_version).toBe('vertex-2023-10-16')
        expect(sentBody).not.toHaveProperty('model')
        expect(sent?.headers['anthropic-version']).toBeUndefined()
      }
    })

    it('a streamed answer, from the streaming Vertex path', async () => {
      const marker = markerFor(`stream ${client.name} ${target}`)
      fx.mock.steer(marker, { chunks: 1 })
      const { path, headers, body } = client.request(MODELS[target], marker, true)
      const res = await call(`${fx.url}${path}`, { headers, body })
      fx.mock.steer(marker, undefined)
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
      expect(res.text).toContain(`Echo: ${marker}`)
      expect(upstreamCalls(marker)[0]?.path).toMatch(PATHS[target].stream)
    })

    it("an upstream error is answered in the client's dialect with its status", async () => {
      const marker = markerFor(`error ${client.name} ${target}`)
      fx.mock.steer(marker, { status: 429, headers: { 'retry-after': '7' } })
      const { path, headers, body } = client.request(MODELS[target], marker, false)
      const res = await call(`${fx.url}${path}`, { headers, body })
      fx.mock.steer(marker, undefined)
      expect(res.status).toBe(429)
      expect(client.isError(res.json)).toBe(true)
    })
  })
})

describe('more of each upstream’s behaviour through Vertex AI', () => {
  it.each(['gemini', 'claude'] as const)('a stream the %s model breaks off mid-way ends in the client’s error event', async (target) => {
    const marker = markerFor(`broken ${target}`)
    fx.mock.steer(marker, { chunks: 6, destroy_after_frames: 2 })
    const res = await call(`${fx.url}/v1/messages`, {
      headers: CLAUDE_HEADERS,
      body: { model: MODELS[target], stream: true, max_tokens: 64, messages: [{ role: 'user', content: marker }] },
    })
    fx.mock.steer(marker, undefined)
    expect(res.status).toBe(200)
    expect(res.text).toMatch(/event: error\ndata: \{"type":"error"/)
  })

  it.each(['gemini', 'claude'] as const)('a 400 of the %s model reaches a chat client as its 400', async (target) => {
    const marker = markerFor(`invalid ${target}`)
    fx.mock.steer(marker, { status: 400 })
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: { model: MODELS[target], messages: [{ role: 'user', content: marker }] },
    })
    fx.mock.steer(marker, undefined)
    expect(res.status).toBe(400)
    expect(res.json.error.message).toBeTruthy()
  })

  it('an Anthropic client’s anthropic-beta reaches a Claude model on Vertex AI as a header; its version does not', async () => {
    const marker = markerFor('beta')
    const res = await call(`${fx.url}/v1/messages`, {
      headers: { ...CLAUDE_HEADERS, 'anthropic-beta': 'context-1m-2025-08-07' },
      body: { model: MODELS.claude, max_tokens: 64, messages: [{ role: 'user', content: marker }] },
    })
    expect(res.status).toBe(200)
    const [sent] = upstreamCalls(marker)
    expect(sent?.headers['anthropic-beta']).toBe('context-1m-2025-08-07')
    expect(sent?.headers['anthropic-version']).toBeUndefined()
    expect(JSON.parse(sent!.body).anthropic_version).toBe('vertex-2023-10-16')
  })

  it.each(['gemini', 'claude'] as const)('Idempotency-Key on the %s model: a repeat is replayed, one upstream call', async (target) => {
    const marker = markerFor(`idempotent ${target}`)
    const options = {
      headers: { ...bearer(KEY_A), 'Idempotency-Key': `vertex-${marker.replace(/\W/g, '-')}` },
      body: { model: MODELS[target], messages: [{ role: 'user', content: marker }] },
    }
    const first = await call(`${fx.url}/v1/chat/completions`, options)
    const second = await call(`${fx.url}/v1/chat/completions`, options)
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls(marker)).toHaveLength(1)
  })
})

describe('tools round trip through Vertex AI', () => {
  const WEATHER_PARAMS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

  it.each(['gemini', 'claude'] as const)('OpenAI chat → %s: a tool call, then the tool result answered', async (target) => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_PARAMS } }]
    const marker = markerFor(`tools chat ${target}`)
    const first = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: { model: MODELS[target], tools, messages: [{ role: 'user', content: marker }] },
    })
    expect(first.status).toBe(200)
    const toolCall = first.json.choices[0].message.tool_calls[0]
    expect(toolCall.function.name).toBe('get_weather')
    const second = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: {
        model: MODELS[target],
        tools,
        messages: [
          { role: 'user', content: marker },
          first.json.choices[0].message,
          { role: 'tool', tool_call_id: toolCall.id, content: '{"temp":21}' },
        ],
      },
    })
    expect(second.status).toBe(200)
    expect(second.json.choices[0].message.content).toContain('21')
  })

  it.each(['gemini', 'claude'] as const)('Anthropic → %s: tool_use, then the tool_result answered', async (target) => {
    const tools = [{ name: 'get_weather', input_schema: WEATHER_PARAMS }]
    const marker = markerFor(`tools claude ${target}`)
    const base = { model: MODELS[target], max_tokens: 256, tools }
    const first = await call(`${fx.url}/v1/messages`, {
      headers: CLAUDE_HEADERS,
      body: { ...base, messages: [{ role: 'user', content: marker }] },
    })
    expect(first.status).toBe(200)
    const use = first.json.content.find((block: any) => block.type === 'tool_use')
    expect(use.name).toBe('get_weather')
    const second = await call(`${fx.url}/v1/messages`, {
      headers: CLAUDE_HEADERS,
      body: {
        ...base,
        messages: [
          { role: 'user', content: marker },
          { role: 'assistant', content: first.json.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temp":21}' }] },
        ],
      },
    })
    expect(second.status).toBe(200)
    expect(JSON.stringify(second.json.content)).toContain('21')
  })
})

describe('token counts through Vertex AI', () => {
  const contents = [{ role: 'user', parts: [{ text: 'count these words please' }] }]
  const messages = [{ role: 'user', content: 'count these words please' }]

  it.each(['gemini', 'claude'] as const)('Anthropic count_tokens on the %s model', async (target) => {
    const res = await call(`${fx.url}/v1/messages/count_tokens`, { headers: CLAUDE_HEADERS, body: { model: MODELS[target], messages } })
    expect(res.status).toBe(200)
    expect(res.json.input_tokens).toBeGreaterThan(0)
    const sent = fx.mock.requests.at(-1)!
    if (target === 'claude') {
      expect(sent.path).toBe('/v1/projects/mock-project/locations/us-central1/publishers/anthropic/models/count-tokens:rawPredict')
      expect(JSON.parse(sent.body)).toMatchObject({ anthropic_version: 'vertex-2023-10-16', model: VERTEX_CLAUDE })
    } else expect(sent.path).toMatch(/publishers\/google\/models\/gemini-2\.5-flash:countTokens$/)
  })

  it("Bedrock CountTokens on the Claude model: Vertex AI's count-tokens:rawPredict, answered as Bedrock's", async () => {
    const res = await call(`${fx.url}/model/${MODELS.claude}/count-tokens`, {
      headers: bearer(KEY_A),
      body: { input: { converse: { messages: [{ role: 'user', content: [{ text: 'count these words please' }] }] } } },
    })
    expect(res.status, res.text).toBe(200)
    expect(res.json.inputTokens).toBeGreaterThan(0)
    const sent = fx.mock.requests.at(-1)!
    expect(sent.path).toBe('/v1/projects/mock-project/locations/us-central1/publishers/anthropic/models/count-tokens:rawPredict')
    expect(JSON.parse(sent.body)).toEqual({ anthropic_version: 'vertex-2023-10-16', model: VERTEX_CLAUDE, messages })
  })

  it('Gemini countTokens on the Gemini model: its :countTokens method', async () => {
    const res = await call(`${fx.url}/v1beta/models/${MODELS.gemini}:countTokens`, { headers: GOOGLE_HEADERS, body: { contents } })
    expect(res.status, res.text).toBe(200)
    expect(res.json.totalTokens).toBeGreaterThan(0)
    expect(fx.mock.requests.at(-1)!.path).toMatch(/gemini-2\.5-flash:countTokens$/)
  })

  it('Gemini countTokens on the Claude model: counted by its count-tokens:rawPredict, as a Messages count', async () => {
    const res = await call(`${fx.url}/v1beta/models/${MODELS.claude}:countTokens`, { headers: GOOGLE_HEADERS, body: { contents } })
    expect(res.status, res.text).toBe(200)
    expect(res.json).toEqual({ totalTokens: Math.ceil('count these words please'.length / 4) })
    const sent = fx.mock.requests.at(-1)!
    expect(sent.path).toBe('/v1/projects/mock-project/locations/us-central1/publishers/anthropic/models/count-tokens:rawPredict')
    expect(JSON.parse(sent.body)).toEqual({ anthropic_version: 'vertex-2023-10-16', model: VERTEX_CLAUDE, messages })
  })
})

describe("the gateway's promises on Vertex AI", () => {
  it.each([
    ['Anthropic', 'claude'],
    ['OpenAI chat', 'gemini'],
  ] as const)('%s → %s: a cut stream runs to its end and is resumed after event 2', async (clientName, target) => {
    const client = CLIENTS.find((c) => c.name === clientName)!
    const marker = markerFor(`cut ${clientName} ${target}`)
    fx.mock.steer(marker, { chunks: 8, chunk_delay_ms: 30 })
    const { path, headers, body } = client.request(MODELS[target], marker, true)
    const cut = await cutAfterEvents(`${fx.url}${path}`, headers, body, 2)
    expect(cut.status).toBe(200)
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 && typeof res.json.response?.stream_raw === 'string' ? res.json : undefined
    })
    fx.mock.steer(marker, undefined)
    const rest = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...bearer(KEY_A), 'last-event-id': '2' } })
    expect(rest.status).toBe(200)
    expect(sseEvents(rest.text).length).toBeGreaterThan(0)
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    expect(upstreamCalls(marker)).toHaveLength(1)
  })

  it.each(['gemini', 'claude'] as const)(
    'a retry (x-stainless-retry-count: 1) joins the call to the %s model still running',
    async (target) => {
      const marker = markerFor(`join ${target}`)
      fx.mock.steer(marker, { delay_ms: 300 })
      const body = { model: MODELS[target], messages: [{ role: 'user', content: marker }] }
      const attempt = (count: number) =>
        call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'x-stainless-retry-count': String(count) }, body })
      const first = attempt(0)
      await eventually(() => upstreamCalls(marker).length === 1)
      const [a, b] = await Promise.all([first, attempt(1)])
      fx.mock.steer(marker, undefined)
      expect(b.text).toBe(a.text)
      expect(b.headers['idempotent-replayed']).toBe('true')
      expect(upstreamCalls(marker)).toHaveLength(1)
    },
  )

  it.each(['gemini', 'claude'] as const)('a background response on the %s model completes and is read by id', async (target) => {
    const marker = markerFor(`background ${target}`)
    const created = await call(`${fx.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: MODELS[target], input: marker, background: true },
    })
    expect(created.status).toBe(200)
    expect(created.json.background).toBe(true)
    const done = await eventually(async () => {
      const res = await call(`${fx.url}/v1/responses/${created.json.id}`, { headers: bearer(KEY_A) })
      return res.json.status === 'completed' ? res.json : undefined
    })
    expect(done.output.find((item: any) => item.type === 'message').content[0].text).toBe(`Echo: ${marker}`)
  })

  it('usage events and OpenTelemetry name the provider gcp.vertex_ai, and the token is fetched once for many calls', async () => {
    const seen: any[] = []
    const listener = (message: unknown) => seen.push(message)
    diagnosticsChannel.subscribe(gatewayChannels.upstreamRequest, listener)
    try {
      const issued = fx.mock.vertex.tokensIssued
      for (const target of ['gemini', 'claude'] as const) {
        const res = await call(`${fx.url}/v1/chat/completions`, {
          headers: bearer(KEY_A),
          body: { model: MODELS[target], messages: [{ role: 'user', content: markerFor('otel') }] },
        })
        expect(res.status).toBe(200)
      }
      expect(fx.mock.vertex.tokensIssued).toBe(issued)
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.upstreamRequest, listener)
    }
    expect(seen.map((m) => m.provider)).toEqual(['gcp.vertex_ai', 'gcp.vertex_ai'])
    expect(fx.usage.at(-1)).toMatchObject({ model: 'claude-sonnet-4-5' })
  })
})

describe('fallbacks across upstream types', () => {
  it('a Claude model on Vertex AI that fails falls back to Claude on Anthropic’s API, in one answer', async () => {
    const anthropicMock = await startMockUpstream()
    const gateway = createGateway({
      upstreams: {
        vertex: { type: 'vertex', project: 'mock-project', location: 'us-central1', baseUrl: fx.mock.url, credentials: fx.key },
        anthropic: { type: 'anthropic', baseUrl: anthropicMock.url },
      },
      models: [
        { id: 'claude-vertex', upstream: 'vertex', upstreamModel: VERTEX_CLAUDE, fallbacks: ['claude-direct'] },
        { id: 'claude-direct', upstream: 'anthropic', upstreamModel: 'claude-sonnet-4-5' },
      ],
      auth: { apiKeys: [KEY_A] },
      logger: { warn() {}, error() {} },
    })
    const server = await NODE_KINDS[0]!.mount(gateway)
    try {
      const marker = markerFor('fallback')
      fx.mock.steer(marker, { status: 503 })
      const res = await call(`${server.url}/v1/messages`, {
        headers: CLAUDE_HEADERS,
        body: { model: 'claude-vertex', max_tokens: 64, messages: [{ role: 'user', content: marker }] },
      })
      fx.mock.steer(marker, undefined)
      expect(res.status).toBe(200)
      expect(res.json.content[0].text).toBe(`Echo: ${marker}`)
      expect(upstreamCalls(marker).length).toBeGreaterThanOrEqual(1)
      expect(anthropicMock.requests.filter((r) => r.body.includes(marker))).toHaveLength(1)
      expect(anthropicMock.requests.at(-1)!.path).toBe('/v1/messages')
    } finally {
      await server.close()
      await gateway.close()
      await anthropicMock.close()
    }
  })
})
