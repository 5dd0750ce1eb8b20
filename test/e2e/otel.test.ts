import diagnosticsChannel from 'node:diagnostics_channel'
import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { type DataPoint, type Histogram, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, NodeTracerProvider, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { gatewayChannels } from '../../src/index.js'
import { instrumentGateway } from '../../src/otel/index.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
const PROMPT = 'a prompt no span may carry'
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c'
const TRACEPARENT = `00-${CLIENT_TRACE}-b7ad6b7169203331-01`

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter()
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const reader = new TestReader()
const meterProvider = new MeterProvider({ readers: [reader] })
let fx: Fixture
let stop: () => void

beforeAll(async () => {
  // The global propagator (W3C trace context) and context manager, as an application's SDK setup registers them.
  tracerProvider.register()
  fx = await startFixture(NODE)
  stop = instrumentGateway(fx.gateway, { tracerProvider, meterProvider })
})
afterEach(async () => {
  exporter.reset()
  await reader.collect() // the counters are cumulative; tests compare before and after
})
afterAll(async () => {
  stop()
  await fx.close()
  await tracerProvider.shutdown()
})

const spans = () => exporter.getFinishedSpans()
const spanNamed = (name: string, kind: SpanKind) => spans().filter((s) => s.name === name && s.kind === kind)
const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), ...headers }, body })

/** Every data point of one metric, with its attributes. */
async function points(name: string): Promise<Array<DataPoint<number | Histogram>>> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics }
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as Array<DataPoint<number | Histogram>>),
  )
}
const countOf = (point: DataPoint<number | Histogram> | undefined) =>
  point === undefined ? 0 : typeof point.value === 'number' ? point.value : point.value.count
const withAttributes = (list: Array<DataPoint<number | Histogram>>, attributes: Attributes) =>
  list.find((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))

/** The SERVER span and CLIENT spans of one request id, once its SERVER span ended. */
async function traceOf(requestId: string): Promise<{ server: ReadableSpan; clients: ReadableSpan[] }> {
  const server = await eventually(() =>
    spans().find((s) => s.kind === SpanKind.SERVER && s.attributes['model_gateway.request_id'] === requestId),
  )
  const clients = spans().filter((s) => s.kind === SpanKind.CLIENT && s.parentSpanContext?.spanId === server.spanContext().spanId)
  return { server, clients }
}

describe('instrumentGateway', () => {
  it('a plain call: SERVER and CLIENT spans with GenAI attributes, the client trace continued and carried upstream', async () => {
    fx.mock.resetRequests()
    const res = await chat(chatBody(PROMPT, { mock: { usage: { prompt_tokens: 3, completion_tokens: 4 } } }), { traceparent: TRACEPARENT })
    expect(res.status).toBe(200)
    const { server, clients } = await traceOf(res.headers['x-request-id'] as string)
    expect(server.name).toBe('chat gpt-4o-mini')
    expect(server.spanContext().traceId).toBe(CLIENT_TRACE)
    expect(server.parentSpanContext?.spanId).toBe('b7ad6b7169203331')
    expect(server.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.stream': false,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 4,
      'http.response.status_code': 200,
      'model_gateway.request_id': res.headers['x-request-id'],
    })
    expect(server.status.code).toBe(SpanStatusCode.UNSET)
    expect(clients).toHaveLength(1)
    const [client] = clients as [ReadableSpan]
    expect(client.name).toBe('chat gpt-4o-mini')
    expect(client.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.stream': false,
      'gen_ai.response.model': 'gpt-4o-mini',
      'http.response.status_code': 200,
      'model_gateway.upstream': 'mock',
    })
    // The upstream received the trace, with the CLIENT span as its parent.
    const sent = fx.mock.requests.at(-1)?.headers.traceparent
    expect(sent).toBe(`00-${CLIENT_TRACE}-${client.spanContext().spanId}-01`)

    const usage = await points('gen_ai.client.token.usage')
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini' }
    const input = withAttributes(usage, { ...base, 'gen_ai.token.type': 'input' })?.value as Histogram
    expect(input.sum).toBeGreaterThanOrEqual(3)
    expect(countOf(withAttributes(await points('gen_ai.server.request.duration'), base))).toBeGreaterThanOrEqual(1)
    expect(countOf(withAttributes(await points('gen_ai.client.operation.duration'), base))).toBeGreaterThanOrEqual(1)
    // No prompt text in any attribute of any span.
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(PROMPT)
  })

  it('a generate-content stream: gcp.gemini, stream true, time to first token recorded', async () => {
    const res = await call(`${fx.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      headers: { 'x-goog-api-key': KEY_A },
      body: geminiBody(PROMPT, { mock: { chunks: 3 } }),
    })
    expect(res.status).toBe(200)
    const { server, clients } = await traceOf(res.headers['x-request-id'] as string)
    expect(server.name).toBe('generate_content gemini-2.5-flash')
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'generate_content',
      'gen_ai.provider.name': 'gcp.gemini',
      'gen_ai.request.stream': true,
      'gen_ai.response.finish_reasons': ['STOP'],
      'gen_ai.usage.output_tokens': expect.any(Number),
    })
    expect(clients.map((c) => c.attributes['gen_ai.provider.name'])).toEqual(['gcp.gemini'])
    // No client trace: a new one starts here.
    expect(server.parentSpanContext).toBeUndefined()
    const ttft = await points('gen_ai.server.time_to_first_token')
    expect(countOf(withAttributes(ttft, { 'gen_ai.operation.name': 'generate_content' }))).toBeGreaterThanOrEqual(1)
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(PROMPT)
  })

  it('finish reasons, one per choice in the upstream’s words: chat and generate-content, whole and streamed, translated', async () => {
    const reasonsOf = async (res: { status: number; headers: Record<string, unknown> }) => {
      expect(res.status).toBe(200)
      const { server } = await traceOf(res.headers['x-request-id'] as string)
      return server.attributes['gen_ai.response.finish_reasons']
    }
    const tool = { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } }
    expect(await reasonsOf(await chat(chatBody('x', { tools: [tool] })))).toEqual(['tool_calls'])
    expect(await reasonsOf(await chat(chatBody('x', { n: 2, stream: true, mock: { chunks: 3 } })))).toEqual(['stop', 'stop'])
    const gemini = (method: string, body: Record<string, unknown>) =>
      call(`${fx.url}/v1beta/models/gemini-2.5-flash:${method}`, { headers: { 'x-goog-api-key': KEY_A }, body })
    expect(await reasonsOf(await gemini('generateContent', geminiBody()))).toEqual(['STOP'])
    expect(await reasonsOf(await gemini('streamGenerateContent?alt=sse', geminiBody('x', { mock: { chunks: 4 } })))).toEqual(['STOP'])
    // A chat client of a Gemini model: the reason is the upstream's, as `gen_ai.provider.name` is.
    expect(await reasonsOf(await chat(chatBody('x', { model: 'gemini-2.5-flash' })))).toEqual(['STOP'])
    expect(await reasonsOf(await chat(chatBody('x', { model: 'gemini-2.5-flash', stream: true })))).toEqual(['STOP'])
  })

  it('an upstream error answer and an unreachable upstream: error.type on both spans and on the durations', async () => {
    const res = await chat(chatBody('x', { mock: { status: 429 } }))
    expect(res.status).toBe(429)
    const failed = await traceOf(res.headers['x-request-id'] as string)
    expect(failed.server.attributes['error.type']).toBe('429')
    expect(failed.server.status.code).toBe(SpanStatusCode.ERROR)
    expect(failed.clients[0]?.attributes['error.type']).toBe('429')

    const other = await startFixture(NODE, {
      upstreams: { dead: { type: 'openai', baseUrl: `http://127.0.0.1:${await freePort()}/v1` } },
      models: [{ id: 'dead', upstream: 'dead' }],
    })
    const stopOther = instrumentGateway(other.gateway, { tracerProvider, meterProvider })
    try {
      const unreachable = await call(`${other.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { model: 'dead' }) })
      expect(unreachable.status).toBe(502)
      const { server, clients } = await traceOf(unreachable.headers['x-request-id'] as string)
      expect(server.attributes).toMatchObject({ 'error.type': 'upstream_unreachable', 'http.response.status_code': 502 })
      expect(clients[0]?.attributes['error.type']).toBe('upstream_unreachable')
      const durations = await points('gen_ai.server.request.duration')
      expect(countOf(withAttributes(durations, { 'error.type': 'upstream_unreachable' }))).toBe(1)
    } finally {
      stopOther()
      await other.close()
    }
  })

  it('reports the status the client got: 503 to a Google client whose call failed 502 upstream_unreachable', async () => {
    const other = await startFixture(NODE, {
      upstreams: { dead: { type: 'openai', baseUrl: `http://127.0.0.1:${await freePort()}/v1` } },
      models: [{ id: 'dead', upstream: 'dead' }],
    })
    const stopOther = instrumentGateway(other.gateway, { tracerProvider, meterProvider })
    const ends: Array<{ requestId: string; status: number }> = []
    const onEnd = (message: unknown) => ends.push(message as { requestId: string; status: number })
    diagnosticsChannel.subscribe(gatewayChannels.callEnd, onEnd)
    try {
      const res = await call(`${other.url}${gpath(false, 'dead')}`, { headers: goog(KEY_A), body: geminiBody('x') })
      expect(res.status).toBe(503)
      expect(res.json.error.status).toBe('UNAVAILABLE')
      const requestId = res.headers['x-request-id'] as string
      const { server } = await traceOf(requestId)
      expect(server.attributes).toMatchObject({ 'error.type': 'upstream_unreachable', 'http.response.status_code': 503 })
      expect(ends.find((m) => m.requestId === requestId)?.status).toBe(503)
    } finally {
      diagnosticsChannel.unsubscribe(gatewayChannels.callEnd, onEnd)
      stopOther()
      await other.close()
    }
  })

  it('a fallback after an unreachable upstream: a CLIENT span per attempt, each carrying its own trace upstream', async () => {
    const other = await startFixture(NODE, {
      upstreams: {
        dead: { type: 'openai', baseUrl: `http://127.0.0.1:${await freePort()}/v1` },
        live: { type: 'openai', baseUrl: `${fx.mock.url}/v1`, apiKey: UPSTREAM_KEY },
      },
      models: [
        { id: 'gpt-4o-mini', upstream: 'dead', fallbacks: ['backup'] },
        { id: 'backup', upstream: 'live', upstreamModel: 'gpt-4o-mini' },
      ],
    })
    const stopOther = instrumentGateway(other.gateway, { tracerProvider, meterProvider })
    try {
      fx.mock.resetRequests()
      const res = await call(`${other.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x') })
      expect(res.status).toBe(200)
      const { server, clients } = await traceOf(res.headers['x-request-id'] as string)
      expect(server.attributes).toMatchObject({ 'http.response.status_code': 200, 'gen_ai.response.finish_reasons': ['stop'] })
      expect(clients.map((c) => [c.attributes['model_gateway.upstream'], c.attributes['error.type']])).toEqual([
        ['dead', 'upstream_unreachable'],
        ['live', undefined],
      ])
      // The fallback's request was made from the first attempt's: it carries its own span, not the first one's.
      const live = clients[1] as ReadableSpan
      expect(fx.mock.requests.map((r) => r.headers.traceparent)).toEqual([
        `00-${live.spanContext().traceId}-${live.spanContext().spanId}-01`,
      ])
    } finally {
      stopOther()
      await other.close()
    }
  })

  it('a client that leaves a stream: client_disconnected', async () => {
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('left', { stream: true, mock: { chunks: 40, chunk_delay_ms: 50 } })),
      afterMs: 150,
    })
    const server = await eventually(() => spanNamed('chat gpt-4o-mini', SpanKind.SERVER)[0])
    expect(server.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'error.type': 'client_disconnected' })
    expect(server.status.code).toBe(SpanStatusCode.ERROR)
  })

  it('a kept answer fetched back: model_gateway.recovery.kept, then a fetch_response span and recovery.fetched', async () => {
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody(PROMPT, { mock: { delay_ms: 300 } })),
      afterMs: 50,
    })
    const server = await eventually(() => spanNamed('chat gpt-4o-mini', SpanKind.SERVER)[0])
    expect(server.attributes).toMatchObject({ 'model_gateway.recovered': true, 'error.type': 'client_disconnected' })
    await eventually(async () => countOf((await points('model_gateway.recovery.kept'))[0]) >= 1)
    const recordId = server.attributes['model_gateway.request_id'] as string
    const fetched = await call(`${fx.url}/v1/recoveries/${recordId}`, {
      method: 'GET',
      headers: { ...bearer(KEY_A), traceparent: TRACEPARENT },
    })
    expect(fetched.status).toBe(200)
    const span = await eventually(() => spanNamed('fetch_response', SpanKind.SERVER)[0])
    expect(span.spanContext().traceId).toBe(CLIENT_TRACE)
    expect(span.attributes).toEqual({
      'model_gateway.recovery.operation': 'get',
      'model_gateway.request_id': fetched.headers['x-request-id'],
      'model_gateway.recovery.record_id': recordId,
      'model_gateway.recovery.found': true,
    })
    expect(countOf((await points('model_gateway.recovery.fetched'))[0])).toBeGreaterThanOrEqual(1)
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(PROMPT)
  })

  it('an SDK retry answered from the kept answer: a served SERVER span and model_gateway.call.replayed', async () => {
    const before = countOf((await points('model_gateway.call.replayed'))[0])
    const key = { 'idempotency-key': `otel-${Date.now()}` }
    const first = await chat(chatBody('once'), key)
    const again = await chat(chatBody('once'), key)
    // A replay carries the original call's request id: the answer is that call's.
    expect(again.headers).toMatchObject({ 'idempotent-replayed': 'true', 'x-request-id': first.headers['x-request-id'] })
    const served = await eventually(() => spans().find((s) => s.attributes['model_gateway.served'] === 'replay'))
    expect(served.kind).toBe(SpanKind.SERVER)
    expect(served.name).toBe('chat gpt-4o-mini')
    expect(served.attributes).toMatchObject({
      'model_gateway.original_request_id': first.headers['x-request-id'],
      'model_gateway.request_id': expect.not.stringMatching(first.headers['x-request-id'] as string),
    })
    expect(countOf((await points('model_gateway.call.replayed'))[0])).toBe(before + 1)
  })
})

describe('instrumentGateway on Messages', () => {
  const CLAUDE = 'claude-haiku-4-5'
  const ANTHROPIC = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
  const anthropic = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': CLAUDE }
  /** A Messages body of one user turn (`count` leaves out what a token count does not take). */
  const ask = (model: string, extra: Record<string, unknown> = {}, count = false) => ({
    model,
    ...(count ? {} : { max_tokens: 64 }),
    messages: [{ role: 'user', content: PROMPT }],
    ...extra,
  })
  let other: Fixture
  let stopOther: () => void
  beforeAll(async () => {
    other = await startFixture(NODE, {
      upstreams: {
        claude: { type: 'anthropic', baseUrl: fx.mock.url, apiKey: UPSTREAM_KEY },
        gem: { type: 'gemini', baseUrl: fx.mock.url, apiKey: UPSTREAM_KEY },
      },
      models: [CLAUDE, 'gemini-2.5-flash'].map((id) => ({ id, upstream: id === CLAUDE ? 'claude' : 'gem' })),
    })
    stopOther = instrumentGateway(other.gateway, { tracerProvider, meterProvider })
  })
  afterAll(async () => {
    stopOther()
    await other.close()
  })
  /** The input and output token sums the usage histogram holds for Anthropic chat calls of the Claude model so far. */
  const tokensSoFar = async () => {
    const list = await points('gen_ai.client.token.usage')
    const sum = (type: string) => (withAttributes(list, { ...anthropic, 'gen_ai.token.type': type })?.value as Histogram | undefined)?.sum
    return [sum('input') ?? 0, sum('output') ?? 0] as const
  }

  it.each([false, true])(
    'on an Anthropic upstream (stream: %s): anthropic and chat on both spans, input counting the cache',
    async (stream) => {
      const [input, output] = await tokensSoFar()
      const usage = { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 30, output_tokens: 7 }
      const res = await call(`${other.url}/v1/messages`, { headers: ANTHROPIC, body: ask(CLAUDE, { stream, mock: { usage } }) })
      expect(res.status).toBe(200)
      const { server, clients } = await traceOf(res.headers['x-request-id'] as string)
      const answered = { ...anthropic, 'gen_ai.request.stream': stream, 'gen_ai.response.model': CLAUDE, 'http.response.status_code': 200 }
      expect(server.name).toBe(`chat ${CLAUDE}`)
      expect(server.attributes).toEqual({
        ...answered,
        'gen_ai.response.finish_reasons': ['end_turn'],
        'gen_ai.usage.input_tokens': 60,
        'gen_ai.usage.output_tokens': 7,
        'model_gateway.request_id': res.headers['x-request-id'],
      })
      expect(clients.map((c) => c.name)).toEqual([`chat ${CLAUDE}`])
      expect(clients[0]?.attributes).toEqual({ ...answered, 'model_gateway.upstream': 'claude' })
      // Input is every prompt token: 10 read afresh, 20 written to the cache, 30 read from it.
      const [inputNow, outputNow] = await tokensSoFar()
      expect([inputNow - input, outputNow - output]).toEqual([60, 7])
      expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(PROMPT)
    },
  )

  it.each([
    [
      'a chat client on a Claude model',
      '/v1/chat/completions',
      bearer(KEY_A),
      chatBody('x', { model: CLAUDE }),
      'chat',
      'anthropic',
      'chat',
    ],
    ['a Gemini client on a Claude model', gpath(false, CLAUDE), goog(KEY_A), geminiBody(), 'generate_content', 'anthropic', 'chat'],
    ['a Messages client on a Gemini model', '/v1/messages', ANTHROPIC, ask('gemini-2.5-flash'), 'chat', 'gcp.gemini', 'generate_content'],
    ['a token count', '/v1/messages/count_tokens', ANTHROPIC, ask(CLAUDE, {}, true), 'count_tokens', 'anthropic', 'count_tokens'],
  ])('%s: the SERVER span names the client’s operation, the CLIENT span the upstream’s, both the provider', async (...row) => {
    const [, path, headers, body, operation, provider, attempt] = row
    const res = await call(`${other.url}${path}`, { headers, body })
    expect(res.status).toBe(200)
    const { server, clients } = await traceOf(res.headers['x-request-id'] as string)
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': operation, 'gen_ai.provider.name': provider })
    const attempts = clients.map((c) => [c.attributes['gen_ai.operation.name'], c.attributes['gen_ai.provider.name']])
    expect(attempts).toEqual([[attempt, provider]])
  })
})

describe('instrumentGateway() and its end', () => {
  it('reports every gateway without one named, and leaves no subscriber behind once stopped', async () => {
    const other = await startFixture(NODE)
    const stopAll = instrumentGateway(undefined, { tracerProvider, meterProvider })
    try {
      const res = await call(`${other.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
      await traceOf(res.headers['x-request-id'] as string)
    } finally {
      stopAll()
      await other.close()
    }
    stop()
    // Nothing listens any more: every publish site is back to its one `hasSubscribers` check.
    for (const name of Object.values(gatewayChannels)) expect(diagnosticsChannel.channel(name).hasSubscribers, name).toBe(false)
    exporter.reset()
    const res = await chat(chatBody())
    expect(res.status).toBe(200)
    expect(spans()).toEqual([])
  })
})
