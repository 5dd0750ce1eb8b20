import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { UsageEvent } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import type { MountedServer } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// An OpenAI upstream with `api: 'responses'`: the Anthropic SDK and Google's SDK, unchanged, on a model only the
// Responses API serves. Each scenario checks what the client got, what the mock upstream was sent (and where), and
// the usage event of the call.
const MODEL = 'gpt-5-codex'

const fx = {} as { url: string; mock: MockUpstream; gateway: Gateway; server: MountedServer }
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx.mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  fx.gateway = createGateway({
    upstreams: { codex: { type: 'openai', baseUrl: `${fx.mock.url}/v1`, apiKey: UPSTREAM_KEY, api: 'responses' } },
    models: [{ id: MODEL, upstream: 'codex' }],
    auth: { apiKeys: [KEY_A] },
    onUsage: (event) => usage.push(event),
  })
  fx.server = await NODE_KINDS[0]!.mount(fx.gateway)
  fx.url = fx.server.url
})
afterAll(async () => {
  await fx.server?.close()
  await fx.gateway?.close()
  await fx.mock?.close()
})

/** What the gateway sent the mock for the scenario `marker` names: each request's path and parsed body. */
const sent = (marker: string) =>
  fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => ({ path: r.path, body: JSON.parse(r.body) as Record<string, any> }))

/** The usage event of the call with this request id (the gateway reports it once the call ends). */
async function usageOf(requestId: string | null): Promise<UsageEvent> {
  await fx.mock.waitFor(() => usage.some((event) => event.requestId === requestId))
  return usage.find((event) => event.requestId === requestId) as UsageEvent
}

/** Fixed counts for a scenario, so the usage the client and the usage event report can be checked exactly. */
const COUNTS = {
  input_tokens: 21,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 30,
}

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}

describe('the Anthropic SDK on a model of a Responses upstream', () => {
  const client = () => new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: 0 })

  it('messages.create: sent to /v1/responses with store false and input items; the answer and usage in Messages terms', async () => {
    const marker = 'create on responses'
    fx.mock.steer(marker, { usage: COUNTS })
    const { data, response } = await client()
      .messages.create({ model: MODEL, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: marker }] })
      .withResponse()
    expect(data).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn' })
    expect(data.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
    expect(data.usage).toMatchObject({ input_tokens: 17, cache_read_input_tokens: 4, output_tokens: 9 })
    const [request, ...more] = sent(marker)
    expect(more).toEqual([])
    expect(request?.path).toBe('/v1/responses')
    expect(request?.body).toEqual({
      model: MODEL,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: marker }] }],
      instructions: 'Be brief.',
      store: false,
      max_output_tokens: 64,
    })
    const event = await usageOf(response.headers.get('x-request-id'))
    expect(event).toMatchObject({
      endpoint: 'messages',
      model: MODEL,
      upstream: 'codex',
      input_tokens: 21,
      output_tokens: 9,
      total_tokens: 30,
    })
    fx.mock.steer(marker, undefined)
  })

  it('messages.stream: finalMessage() assembles the translated Responses stream, with its usage', async () => {
    const marker = 'stream on responses'
    fx.mock.steer(marker, { usage: COUNTS })
    const stream = client().messages.stream({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: marker }] })
    const text: string[] = []
    stream.on('text', (delta) => text.push(delta))
    const message = await stream.finalMessage()
    expect(text.join('')).toBe(`Echo: ${marker}`)
    expect(message).toMatchObject({ role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: `Echo: ${marker}` }] })
    expect(message.usage).toMatchObject({ output_tokens: 9 })
    const [request] = sent(marker)
    expect(request?.path).toBe('/v1/responses')
    expect(request?.body).toMatchObject({ stream: true, store: false })
    const requestId = (await stream.withResponse()).response.headers.get('x-request-id')
    expect(await usageOf(requestId)).toMatchObject({ endpoint: 'messages', input_tokens: 21, output_tokens: 9 })
    fx.mock.steer(marker, undefined)
  })

  it('a tool round trip: the function tool sent with its schema, the call answered, its output sent back', async () => {
    const marker = 'tools on responses'
    const user = { role: 'user' as const, content: marker }
    const first = await client().messages.create({ model: MODEL, max_tokens: 256, tools: [WEATHER], messages: [user] })
    expect(first.stop_reason).toBe('tool_use')
    const call = first.content.find((block) => block.type === 'tool_use')
    expect(call).toMatchObject({ type: 'tool_use', id: expect.any(String), name: 'get_weather', input: expect.any(Object) })
    const final = await client().messages.create({
      model: MODEL,
      max_tokens: 256,
      tools: [WEATHER],
      messages: [
        user,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: '22 degrees' }] },
      ],
    })
    expect(final.stop_reason).toBe('end_turn')
    expect(final.content).toEqual([{ type: 'text', text: expect.stringContaining('22 degrees') }])
    const [one, two] = sent(marker)
    expect(one?.body.tools).toEqual([
      { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: WEATHER.input_schema, strict: false },
    ])
    expect(two?.path).toBe('/v1/responses')
    expect(two?.body.input.slice(1)).toEqual([
      { type: 'function_call', call_id: call?.id, name: 'get_weather', arguments: JSON.stringify(call?.type === 'tool_use' && call.input) },
      { type: 'function_call_output', call_id: call?.id, output: '22 degrees' },
    ])
  })
})

describe('the Google SDK on a model of a Responses upstream', () => {
  const client = () => new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })

  it('generateContent: the text and usage metadata from a Responses answer', async () => {
    const marker = 'gemini on responses'
    fx.mock.steer(marker, { usage: COUNTS })
    const result = await client().models.generateContent({ model: MODEL, contents: marker })
    expect(result.text).toBe(`Echo: ${marker}`)
    expect(result.candidates?.[0]?.finishReason).toBe('STOP')
    expect(result.usageMetadata).toMatchObject({ promptTokenCount: 21, candidatesTokenCount: 9, cachedContentTokenCount: 4 })
    const [request] = sent(marker)
    expect(request?.path).toBe('/v1/responses')
    expect(request?.body).toMatchObject({ model: MODEL, store: false, input: [{ type: 'message', role: 'user' }] })
    fx.mock.steer(marker, undefined)
  })

  it('generateContentStream: the deltas, then the usage of the end', async () => {
    const marker = 'gemini stream on responses'
    fx.mock.steer(marker, { usage: COUNTS })
    const stream = await client().models.generateContentStream({ model: MODEL, contents: marker })
    let text = ''
    let last: Awaited<ReturnType<typeof stream.next>>['value']
    for await (const chunk of stream) {
      text += chunk.text ?? ''
      last = chunk
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 21, candidatesTokenCount: 9 })
    const [request] = sent(marker)
    expect(request?.path).toBe('/v1/responses')
    expect(request?.body).toMatchObject({ stream: true, store: false })
    fx.mock.steer(marker, undefined)
  })
})
