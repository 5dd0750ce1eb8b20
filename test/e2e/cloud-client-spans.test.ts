import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { instrumentGateway } from '../../src/otel/index.js'
import { type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// The spans of the cloud client formats' calls, as of every other route's: Bedrock's InvokeModel and Converse and
// Vertex AI's rawPredict on a Claude model, and Vertex AI's generateContent on a Gemini model, each whole and
// streamed. The SERVER span names the client's model and operation, the usage the upstream reported and the session
// Claude Code sends; its CLIENT span the upstream's call.

const CLAUDE = 'claude-haiku-4-5'
const GEMINI = 'gemini-2.5-flash'
/** How Claude Code in Bedrock mode and in Vertex mode name the model: aliases of the configured one. */
const BEDROCK_ID = 'us.anthropic.claude-haiku-4-5-20251001-v1:0'
const VERTEX_ID = 'claude-haiku-4-5@20251001'
const SESSION = '3d1f7e2c-0b9a-4e51-8c6d-fedcba987654'
const PROMPT = 'a cloud prompt no span may carry'
/** What the Claude upstream reports: input is every prompt token, the cache's included (10 + 20 + 30). */
const CLAUDE_USAGE = { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 30, output_tokens: 7 }
const GEMINI_USAGE = { promptTokenCount: 60, candidatesTokenCount: 7, totalTokenCount: 67 }
const HEADERS = { 'x-api-key': KEY_A, 'x-claude-code-session-id': SESSION }

const exporter = new InMemorySpanExporter()
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
let fx: Fixture
let stop: () => void

beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, (mockUrl) => ({
    upstreams: {
      claude: { type: 'anthropic', baseUrl: mockUrl, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mockUrl, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: CLAUDE, upstream: 'claude', aliases: [BEDROCK_ID, VERTEX_ID] },
      { id: GEMINI, upstream: 'gem' },
    ],
  }))
  stop = instrumentGateway(fx.gateway, { tracerProvider })
})
afterAll(async () => {
  stop()
  await fx.close()
  await tracerProvider.shutdown()
})

/** The SERVER span of one request id, once it ended, and its CLIENT spans. */
async function traceOf(requestId: string): Promise<{ server: ReadableSpan; clients: ReadableSpan[] }> {
  const spans = () => exporter.getFinishedSpans()
  const server = await eventually(() =>
    spans().find((s) => s.kind === SpanKind.SERVER && s.attributes['model_gateway.request_id'] === requestId),
  )
  const clients = spans().filter((s) => s.kind === SpanKind.CLIENT && s.parentSpanContext?.spanId === server.spanContext().spanId)
  return { server, clients }
}

const invokeBody = (text: string) => ({
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
})
const converseBody = (text: string) => ({ messages: [{ role: 'user', content: [{ text }] }], inferenceConfig: { maxTokens: 64 } })
const rawPredictBody = (text: string) => ({
  anthropic_version: 'vertex-2023-10-16',
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
})
const geminiBody = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] })
const VERTEX = '/v1/projects/p/locations/us-east5/publishers'

/** Each route's call, and what its spans say of the upstream. */
const claude = { model: CLAUDE, operation: 'chat', provider: 'anthropic', upstream: 'claude', finish: 'end_turn', usage: CLAUDE_USAGE }
const gemini = {
  model: GEMINI,
  operation: 'generate_content',
  provider: 'gcp.gemini',
  upstream: 'gem',
  finish: 'STOP',
  usage: GEMINI_USAGE,
}
const routes = [
  { name: 'Bedrock InvokeModel', stream: false, path: `/model/${BEDROCK_ID}/invoke`, body: invokeBody, ...claude },
  {
    name: 'Bedrock InvokeModelWithResponseStream',
    stream: true,
    path: `/model/${BEDROCK_ID}/invoke-with-response-stream`,
    body: invokeBody,
    ...claude,
  },
  { name: 'Bedrock Converse', stream: false, path: `/model/${BEDROCK_ID}/converse`, body: converseBody, ...claude },
  { name: 'Bedrock ConverseStream', stream: true, path: `/model/${BEDROCK_ID}/converse-stream`, body: converseBody, ...claude },
  { name: 'Vertex rawPredict', stream: false, path: `${VERTEX}/anthropic/models/${VERTEX_ID}:rawPredict`, body: rawPredictBody, ...claude },
  {
    name: 'Vertex streamRawPredict',
    stream: true,
    path: `${VERTEX}/anthropic/models/${VERTEX_ID}:streamRawPredict`,
    body: rawPredictBody,
    ...claude,
  },
  { name: 'Vertex generateContent', stream: false, path: `${VERTEX}/google/models/${GEMINI}:generateContent`, body: geminiBody, ...gemini },
  {
    name: 'Vertex streamGenerateContent',
    stream: true,
    path: `${VERTEX}/google/models/${GEMINI}:streamGenerateContent?alt=sse`,
    body: geminiBody,
    ...gemini,
  },
]

describe.each(routes)('spans of $name', (route) => {
  it('name the operation and the model, carry the usage, the finish reason and the session', async () => {
    const marker = `${PROMPT} (${route.name})`
    fx.mock.steer(marker, { usage: route.usage })
    const res = await call(`${fx.url}${route.path}`, { headers: HEADERS, body: route.body(marker) })
    fx.mock.steer(marker, undefined)
    expect(res.status).toBe(200)
    const requestId = res.headers['x-request-id'] as string
    const { server, clients } = await traceOf(requestId)
    const answered = {
      'gen_ai.operation.name': route.operation,
      'gen_ai.provider.name': route.provider,
      'gen_ai.request.model': route.model,
      'gen_ai.request.stream': route.stream,
      'gen_ai.response.model': route.model,
      'gen_ai.conversation.id': SESSION,
      'http.response.status_code': 200,
    }
    // The configured id, whichever alias the client named: a model's calls are one series on a dashboard.
    expect(server.name).toBe(`${route.operation} ${route.model}`)
    expect(server.attributes).toEqual({
      ...answered,
      'gen_ai.response.finish_reasons': [route.finish],
      'gen_ai.usage.input_tokens': 60,
      'gen_ai.usage.output_tokens': 7,
      'model_gateway.request_id': requestId,
    })
    expect(clients.map((c) => c.name)).toEqual([`${route.operation} ${route.model}`])
    expect(clients[0]?.attributes).toEqual({ ...answered, 'model_gateway.upstream': route.upstream })
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes))).not.toContain(PROMPT)
  })
})
