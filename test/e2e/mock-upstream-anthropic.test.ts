import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { CLAUDE_MODEL, langchainClaude, langchainText, VERCEL_ANTHROPIC_LEGS } from '../support/anthropic-sdks.js'
import { mock, startExtra, useFreshMock } from '../support/mock-upstream-harness.js'

// The real clients, pointed straight at the mock upstream, read its Messages API as they read Anthropic's: the proof
// that the mock is faithful before the gateway's tests lean on it.
useFreshMock()

const KEY = 'sk-ant-mock-key'
const client = (base = mock.url, apiKey = KEY) => new Anthropic({ baseURL: base, apiKey, maxRetries: 0 })
const user = (content: string) => [{ role: 'user' as const, content }]
const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'days', 'unit'],
  },
}
const TIME = { name: 'get_time', input_schema: { type: 'object' as const, properties: { zone: { type: 'string' } }, required: ['zone'] } }
const THINKING = { type: 'enabled' as const, budget_tokens: 1024 }

describe('@anthropic-ai/sdk against the mock', () => {
  it('messages.create: a Message with its id, text block, stop reason and usage, and the request id the SDK reads', async () => {
    const message = await client().messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 256,
      system: 'be brief',
      messages: user('hello claude'),
    })
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: CLAUDE_MODEL,
      content: [{ type: 'text', text: 'Echo: hello claude' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 5,
        service_tier: 'standard',
      },
    })
    expect(message._request_id).toMatch(/^req_/)
    // What the SDK sent: its version and the key as a Bearer token.
    const sent = mock.requests[0]!
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/messages' })
    expect(sent.headers['anthropic-version']).toBe('2026-10-21')
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it('messages.stream(...).finalMessage(): the same message, assembled by the SDK from the events', async () => {
    const body = { model: CLAUDE_MODEL, max_tokens: 256, messages: user('stream me please') }
    const whole = await client().messages.create(body)
    const stream = client().messages.stream({ ...body, mock: { chunks: 7 } } as Anthropic.MessageCreateParams)
    const texts: string[] = []
    stream.on('text', (delta) => texts.push(delta))
    const final = await stream.finalMessage()
    expect(texts).toHaveLength(7)
    expect(texts.join('')).toBe('Echo: stream me please')
    // The SDK adds fields of its own (`parsed_output`); every field on the wire is the same but the id.
    expect(final).toMatchObject({ ...whole, id: expect.stringMatching(/^msg_/) })
    expect(final.id).not.toBe(whole.id)
  })

  it('a tool round trip: tool_use with input built from the schema, then the tool_result answered', async () => {
    const sdk = client()
    const asked = await sdk.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 256,
      tools: [WEATHER, TIME],
      messages: user('weather in Oslo?'),
    })
    expect(asked.stop_reason).toBe('tool_use')
    expect(asked.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: { city: 'text', days: 1, unit: 'c' } },
    ])
    const call = asked.content[0] as Anthropic.ToolUseBlock
    const answered = await sdk.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 256,
      tools: [WEATHER, TIME],
      messages: [
        ...user('weather in Oslo?'),
        { role: 'assistant', content: asked.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18 degrees' }] },
      ],
    })
    expect(answered.stop_reason).toBe('end_turn')
    expect(answered.content).toEqual([{ type: 'text', text: 'Tool said: 18 degrees' }])
  })

  it('a streamed tool call: input_json_delta pieces the SDK parses into the input; tool_choice picks the tool or none', async () => {
    const sdk = client()
    const stream = sdk.messages.stream({
      model: CLAUDE_MODEL,
      max_tokens: 256,
      tools: [WEATHER, TIME],
      tool_choice: { type: 'tool', name: 'get_time' },
      messages: user('what time is it?'),
    })
    const final = await stream.finalMessage()
    expect(final.stop_reason).toBe('tool_use')
    expect(final.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_time', input: { zone: 'text' } }])
    const none = await sdk.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 256,
      tools: [WEATHER],
      tool_choice: { type: 'none' },
      messages: user('no tools'),
    })
    expect(none.content).toEqual([{ type: 'text', text: 'Echo: no tools' }])
  })

  it('thinking: a signed thinking block before the answer, whole and streamed, and accepted back in the next turn', async () => {
    const sdk = client()
    const body = { model: CLAUDE_MODEL, max_tokens: 2048, thinking: THINKING, messages: user('think first') }
    const whole = await sdk.messages.create(body)
    expect(whole.content).toEqual([
      { type: 'thinking', thinking: expect.any(String), signature: expect.any(String) },
      { type: 'text', text: 'Echo: think first' },
    ])
    const thought = whole.content[0] as Anthropic.ThinkingBlock
    expect(thought.thinking.length).toBeGreaterThan(0)
    expect(thought.signature.length).toBeGreaterThan(0)
    const streamed = await sdk.messages
      .stream({ ...body, mock: { thought_signature: 'c2lnbmVk' } } as Anthropic.MessageCreateParams)
      .finalMessage()
    expect(streamed.content[0]).toEqual({ type: 'thinking', thinking: thought.thinking, signature: 'c2lnbmVk' })
    expect(streamed.content[1]).toEqual({ type: 'text', text: 'Echo: think first' })
    const next = await sdk.messages.create({
      ...body,
      messages: [...body.messages, { role: 'assistant', content: whole.content }, ...user('go on')],
    })
    expect(next.content.at(-1)).toEqual({ type: 'text', text: 'Echo: go on' })
  })

  it('messages.countTokens: the input tokens a message for the same body reports', async () => {
    const sdk = client()
    const prompt = { model: CLAUDE_MODEL, system: 'count the system prompt too', messages: user('how many tokens is this?') }
    const counted = await sdk.messages.countTokens(prompt)
    const message = await sdk.messages.create({ ...prompt, max_tokens: 64 })
    expect(counted).toEqual({ input_tokens: message.usage.input_tokens })
    expect(counted.input_tokens).toBeGreaterThan(10)
    expect(mock.requests[0]!.path).toBe('/v1/messages/count_tokens')
  })

  it('models.list pages through every model; models.retrieve finds one, and a missing one is a NotFoundError', async () => {
    const sdk = client()
    const ids: string[] = []
    for await (const model of sdk.models.list({ limit: 2 })) {
      expect(model).toEqual({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.any(String) })
      ids.push(model.id)
    }
    expect(ids).toContain(CLAUDE_MODEL)
    expect(new Set(ids).size).toBe(ids.length)
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/models?limit=2', `/v1/models?limit=2&after_id=${ids[1]}`])
    expect((await sdk.models.retrieve(CLAUDE_MODEL)).display_name).toBe('Claude Haiku 4.5')
    await expect(sdk.models.retrieve('claude-nope')).rejects.toBeInstanceOf(Anthropic.NotFoundError)
  })

  it('errors: a wrong key is an AuthenticationError, bad bodies are BadRequestErrors with the request id', async () => {
    const guarded = await startExtra({ apiKey: KEY })
    const wrong = await client(guarded.url, 'sk-wrong')
      .messages.create({ model: CLAUDE_MODEL, max_tokens: 8, messages: user('hi') })
      .catch((e) => e)
    expect(wrong).toBeInstanceOf(Anthropic.AuthenticationError)
    expect(wrong).toMatchObject({ status: 401, type: 'authentication_error', requestID: expect.stringMatching(/^req_/) })
    expect(wrong.error).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'invalid x-api-key' },
      request_id: wrong.requestID,
    })
    expect((await client(guarded.url).messages.create({ model: CLAUDE_MODEL, max_tokens: 8, messages: user('hi') })).type).toBe('message')

    // The SDK's types require max_tokens; a body built elsewhere may still lack it.
    const withoutMax: Partial<Anthropic.MessageCreateParamsNonStreaming> = { model: CLAUDE_MODEL, messages: user('hi') }
    const noMax = await client()
      .messages.create(withoutMax as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e) => e)
    expect(noMax).toBeInstanceOf(Anthropic.BadRequestError)
    expect(noMax.error.error).toEqual({ type: 'invalid_request_error', message: 'max_tokens: Field required' })
    // The version the SDK speaks (2026-10-21) refuses the sampling parameters; 2023-06-01 takes them.
    const body = { model: CLAUDE_MODEL, max_tokens: 8, messages: user('hi'), temperature: 0.5 } as Anthropic.MessageCreateParamsNonStreaming
    const sampled = await client()
      .messages.create(body)
      .catch((e) => e)
    expect(sampled).toBeInstanceOf(Anthropic.BadRequestError)
    expect(sampled.error.error.message).toBe('temperature: Extra inputs are not permitted')
    const old = await client().messages.create(body, { headers: { 'anthropic-version': '2023-06-01' } })
    expect(old.content).toEqual([{ type: 'text', text: 'Echo: hi' }])
  })

  it('an upstream error asked for through mock.status comes in its Anthropic type: 529 overloaded_error', async () => {
    const body = { model: CLAUDE_MODEL, max_tokens: 8, messages: user('hi'), mock: { status: 529 } } as Anthropic.MessageCreateParams
    const overloaded = await client()
      .messages.create(body)
      .catch((e) => e)
    expect(overloaded).toBeInstanceOf(Anthropic.APIError)
    expect(overloaded).toMatchObject({ status: 529, type: 'overloaded_error' })
  })
})

describe('LangChain ChatAnthropic against the mock', () => {
  it('invoke and stream answer the last user message', async () => {
    const chat = langchainClaude({ base: mock.url, apiKey: KEY })
    const answer = await chat.invoke('hello langchain')
    expect(langchainText(answer.content)).toBe('Echo: hello langchain')
    expect(answer.usage_metadata).toMatchObject({ input_tokens: 4, output_tokens: 6 })
    let streamed = ''
    for await (const chunk of await chat.stream('stream langchain')) streamed += langchainText(chunk.content)
    expect(streamed).toBe('Echo: stream langchain')
    expect(mock.requests.map((r) => r.headers['anthropic-version'])).toEqual(['2023-06-01', '2023-06-01'])
  })
})

describe.each(VERCEL_ANTHROPIC_LEGS)('$name against the mock', (leg) => {
  it('generateText and streamText: the text, the finish reason and the usage', async () => {
    const target = { base: mock.url, apiKey: KEY }
    const whole = await leg.generate(target, 'hello vercel')
    expect(whole).toEqual({ text: 'Echo: hello vercel', finishReason: 'stop', inputTokens: 3, outputTokens: 5 })
    const streamed = await leg.stream(target, 'hello vercel')
    expect(streamed).toEqual(whole)
    expect(mock.requests.map((r) => r.headers['x-api-key'])).toEqual([KEY, KEY])
  })
})
