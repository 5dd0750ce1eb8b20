import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { CLAUDE_CALL_ID, CLAUDE_SIGNATURE, type ClaudeUpstream, startClaudeUpstream } from '../support/claude-upstream.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import type { MountedServer } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// Every Messages call is translated: the Anthropic SDK, unchanged, on the fixture's OpenAI and Gemini models; and
// the OpenAI and Google SDKs on a model of an Anthropic upstream (a minimal one: the shared mock does not speak
// Messages yet). Each scenario checks what the client got and what the upstream was sent.
const CLAUDE = 'claude-sonnet-4-5'
const CLAUDE_KEY = 'sk-ant-upstream-secret'

/** The mock upstream (OpenAI and Gemini), the Anthropic one, and a gateway with a model of each on node:http. */
const fx = {} as { url: string; mock: MockUpstream; gateway: Gateway; server: MountedServer }
/** What the gateway logged at debug level. */
const debug: Array<{ message: string; meta: Record<string, unknown> | undefined }> = []
let claude: ClaudeUpstream
beforeAll(async () => {
  claude = await startClaudeUpstream(CLAUDE_KEY)
  fx.mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  fx.gateway = createGateway({
    upstreams: {
      mock: { type: 'openai', baseUrl: `${fx.mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: fx.mock.url, apiKey: UPSTREAM_KEY },
      // The version header: until the upstream's own version option sends it on every attempt.
      claude: { type: 'anthropic', baseUrl: claude.url, apiKey: CLAUDE_KEY, headers: { 'anthropic-version': '2023-06-01' } },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'mock' },
      { id: 'gemini-2.5-flash', upstream: 'gem' },
      { id: CLAUDE, upstream: 'claude', maxOutputTokens: 2048 },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { debug: (message, meta) => debug.push({ message, meta }), warn: () => {}, error: () => {} },
  })
  fx.server = await NODE_KINDS[0]!.mount(fx.gateway)
  fx.url = fx.server.url
})
afterAll(async () => {
  await fx.server?.close()
  await fx.gateway?.close()
  await fx.mock?.close()
  await claude?.close()
})

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}

describe.each([
  ['an OpenAI model', 'gpt-4o-mini'],
  ['a Gemini model', 'gemini-2.5-flash'],
])('the Anthropic SDK on %s', (_, model) => {
  const client = () => new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: 0 })
  /** What the gateway sent the mock upstream for the scenario `marker` names, bodies parsed. */
  const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => JSON.parse(r.body))

  it('messages.create: a message with the answer, its stop reason and usage; the hints dropped are named', async () => {
    const marker = `create on ${model}`
    const { data, response } = await client()
      .messages.create({
        model,
        max_tokens: 64,
        system: 'Be brief.',
        metadata: { user_id: 'u-1' },
        messages: [{ role: 'user', content: marker }],
      })
      .withResponse()
    expect(data).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn', stop_sequence: null })
    expect(data.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
    expect(data.usage.input_tokens).toBeGreaterThan(0)
    expect(data.usage.output_tokens).toBeGreaterThan(0)
    expect(response.headers.get('x-model-gateway-dropped')).toBe('metadata')
    // The operator's debug line names the field, never its value.
    const requestId = response.headers.get('x-request-id')
    expect(debug.filter((line) => line.meta?.requestId === requestId)).toEqual([
      { message: expect.stringContaining('dropped'), meta: { requestId, fields: ['metadata'] } },
    ])
    expect(JSON.stringify(debug)).not.toContain('u-1')
    const [sent] = upstream(marker)
    expect(JSON.stringify(sent)).not.toContain('u-1')
    expect(JSON.stringify(sent)).toContain('Be brief.')
  })

  it('messages.stream: finalMessage() assembles the streamed events, with the usage of the end', async () => {
    const marker = `stream on ${model}`
    const stream = client().messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: marker }] })
    const text: string[] = []
    stream.on('text', (delta) => text.push(delta))
    const message = await stream.finalMessage()
    expect(text.join('')).toBe(`Echo: ${marker}`)
    expect(message).toMatchObject({
      role: 'assistant',
      model,
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: `Echo: ${marker}` }],
    })
    expect(message.usage.input_tokens).toBeGreaterThan(0)
    expect(message.usage.output_tokens).toBeGreaterThan(0)
  })

  it('a tool round trip: the tool use, its result sent back, the answer quoting it', async () => {
    const marker = `tools on ${model}`
    // Gemini signs its calls: the signature must reach Gemini again with the call.
    fx.mock.steer(marker, { thought_signature: 'c2lnbmVk' })
    const user = { role: 'user' as const, content: marker }
    const first = await client().messages.create({ model, max_tokens: 256, tools: [WEATHER], messages: [user] })
    expect(first.stop_reason).toBe('tool_use')
    const call = first.content.find((block) => block.type === 'tool_use')
    expect(call).toMatchObject({ type: 'tool_use', id: expect.any(String), name: 'get_weather', input: expect.any(Object) })
    const final = await client().messages.create({
      model,
      max_tokens: 256,
      tools: [WEATHER],
      messages: [
        user,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: '22 degrees', is_error: false }] },
      ],
    })
    expect(final.stop_reason).toBe('end_turn')
    expect(final.content).toEqual([{ type: 'text', text: expect.stringContaining('22 degrees') }])
    const [, second] = upstream(marker)
    if (model.startsWith('gemini')) {
      expect(second.contents[1]).toEqual({
        role: 'model',
        parts: [{ functionCall: { id: call?.id, name: 'get_weather', args: expect.any(Object) }, thoughtSignature: 'c2lnbmVk' }],
      })
    } else {
      expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: call?.id, content: '22 degrees' })
    }
    fx.mock.steer(marker, undefined)
  })

  it('a streamed tool use: finalMessage() has the call with its input whole', async () => {
    const marker = `streamed tools on ${model}`
    const message = await client()
      .messages.stream({
        model,
        max_tokens: 256,
        tools: [WEATHER],
        tool_choice: { type: 'any' },
        messages: [{ role: 'user', content: marker }],
      })
      .finalMessage()
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content.filter((block) => block.type === 'tool_use')).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String),
        name: 'get_weather',
        input: expect.objectContaining({ city: expect.any(String) }),
        caller: { type: 'direct' },
      },
    ])
  })
})

/** The output items a client sends back as input, as Codex does. */
type Sendable = OpenAI.Responses.ResponseReasoningItem | OpenAI.Responses.ResponseFunctionToolCall | OpenAI.Responses.ResponseOutputMessage
const sendable = (item: OpenAI.Responses.ResponseOutputItem): item is Sendable =>
  item.type === 'reasoning' || item.type === 'function_call' || item.type === 'message'

describe('OpenAI and Google clients on an Anthropic model', () => {
  const openai = () => new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
  /** What the gateway sent the Anthropic upstream for the scenario `marker` names. */
  const sent = (marker: string) => claude.requests.filter((r) => JSON.stringify(r.body).includes(marker))

  it('chat.completions.create: the upstream gets its key, a version, max_tokens, never the client’s key', async () => {
    const marker = 'chat on claude'
    const completion = await openai().chat.completions.create({
      model: CLAUDE,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: marker },
      ],
    })
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: `Echo: ${marker}` } })
    expect(completion.usage).toMatchObject({
      prompt_tokens: 18,
      completion_tokens: 7,
      total_tokens: 25,
      prompt_tokens_details: { cached_tokens: 5 },
    })
    const [request, ...more] = sent(marker)
    expect(more).toEqual([])
    expect(request?.headers['x-api-key']).toBe(CLAUDE_KEY)
    expect(request?.headers['anthropic-version']).toBe('2023-06-01')
    expect(JSON.stringify(request?.headers)).not.toContain(KEY_A)
    expect(request?.body).toEqual({ model: CLAUDE, max_tokens: 2048, system: 'Be brief.', messages: [{ role: 'user', content: marker }] })
  })

  it('a chat stream with usage: deltas, the usage chunk with the cached tokens, then [DONE]', async () => {
    const marker = 'chat stream on claude'
    const stream = await openai().chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: marker }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    const usages: unknown[] = []
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usages.push(chunk.usage)
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(usages).toEqual([
      expect.objectContaining({ prompt_tokens: 18, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 5 } }),
    ])
    expect(sent(marker)[0]?.body).toMatchObject({ stream: true, max_tokens: 2048 })
  })

  it('a chat tool loop with reasoning: Claude’s signed thinking goes back with its call', async () => {
    const marker = 'chat tools on claude'
    const tools = [{ type: 'function' as const, function: { name: WEATHER.name, parameters: WEATHER.input_schema } }]
    const user = { role: 'user' as const, content: marker }
    const first = await openai().chat.completions.create({ model: CLAUDE, messages: [user], tools, reasoning_effort: 'low' })
    const message = first.choices[0]?.message
    expect(message?.tool_calls?.[0]).toMatchObject({ id: CLAUDE_CALL_ID, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } })
    // The assistant message goes back as the SDK returned it: the thinking rides in its tool call.
    const final = await openai().chat.completions.create({
      model: CLAUDE,
      messages: [user, message!, { role: 'tool', tool_call_id: CLAUDE_CALL_ID, content: 'sunny' }],
      tools,
      reasoning_effort: 'low',
    })
    expect(final.choices[0]?.message.content).toBe('Tool said: sunny')
    const [, second] = sent(marker)
    expect(second?.body.thinking).toEqual({ type: 'adaptive' })
    expect(second?.body.messages).toMatchObject({
      1: {
        role: 'assistant',
        content: [{ type: 'thinking', signature: CLAUDE_SIGNATURE }, { type: 'text' }, { type: 'tool_use', id: CLAUDE_CALL_ID }],
      },
    })
  })

  it('responses.create: output_text, the cache counts apart, and the hints dropped named', async () => {
    const marker = 'responses on claude'
    const { data, response } = await openai()
      .responses.create({ model: CLAUDE, input: marker, instructions: 'Be brief.', prompt_cache_key: 'k1', store: false })
      .withResponse()
    expect(data.output_text).toBe(`Echo: ${marker}`)
    expect(data.usage).toMatchObject({
      input_tokens: 18,
      input_tokens_details: { cached_tokens: 5, cache_write_tokens: 3 },
      output_tokens: 7,
    })
    expect(response.headers.get('x-model-gateway-dropped')).toBe('prompt_cache_key,store')
    expect(sent(marker)[0]?.body).toEqual({
      model: CLAUDE,
      max_tokens: 2048,
      system: 'Be brief.',
      messages: [{ role: 'user', content: marker }],
    })
  })

  it('a Responses tool loop, streamed: the reasoning item carries the thinking back, response.completed the usage', async () => {
    const marker = 'responses tools on claude'
    const tools = [{ type: 'function' as const, name: WEATHER.name, parameters: WEATHER.input_schema, strict: false }]
    const input = [{ role: 'user' as const, content: marker }]
    const stream = await openai().responses.create({ model: CLAUDE, input, tools, reasoning: { effort: 'low' }, stream: true })
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response
    expect(completed?.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call'])
    expect(completed?.usage?.input_tokens_details).toEqual({ cached_tokens: 5, cache_write_tokens: 3 })
    const final = await openai().responses.create({
      model: CLAUDE,
      input: [
        ...input,
        ...(completed?.output ?? []).filter(sendable),
        { type: 'function_call_output', call_id: CLAUDE_CALL_ID, output: 'sunny' },
      ],
      tools,
      reasoning: { effort: 'low' },
    })
    expect(final.output_text).toBe('Tool said: sunny')
  })

  it('@google/genai: generateContent, a stream, and a function call loop with the thinking carried in a thought signature', async () => {
    const genai = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: fx.url } })
    const marker = 'genai on claude'
    const answer = await genai.models.generateContent({ model: CLAUDE, contents: marker })
    expect(answer.text).toBe(`Echo: ${marker}`)
    expect(answer.usageMetadata).toMatchObject({ promptTokenCount: 18, candidatesTokenCount: 7, cachedContentTokenCount: 5 })
    let streamed = ''
    for await (const chunk of await genai.models.generateContentStream({ model: CLAUDE, contents: `${marker} streamed` }))
      streamed += chunk.text ?? ''
    expect(streamed).toBe(`Echo: ${marker} streamed`)
    const tools = [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: WEATHER.input_schema }] }]
    const user = { role: 'user', parts: [{ text: `${marker} tools` }] }
    const first = await genai.models.generateContent({ model: CLAUDE, contents: [user], config: { tools } })
    expect(first.functionCalls).toEqual([{ id: CLAUDE_CALL_ID, name: 'get_weather', args: { city: 'Paris' } }])
    const final = await genai.models.generateContent({
      model: CLAUDE,
      contents: [
        user,
        first.candidates?.[0]?.content ?? {},
        { role: 'user', parts: [{ functionResponse: { id: CLAUDE_CALL_ID, name: 'get_weather', response: { output: 'sunny' } } }] },
      ],
      config: { tools },
    })
    expect(final.text).toBe('Tool said: sunny')
  })
})
