import { describe, expect, it } from 'vitest'
import { chat, GEN, gemini, geminiFrames, mock, openaiFrames, post, STREAM_SSE, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

const CHAT = '/v1/chat/completions'
const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city', 'days', 'unit'],
    },
  },
}
const GEMINI_WEATHER = {
  functionDeclarations: [
    {
      name: 'get_weather',
      parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' }, metric: { type: 'BOOLEAN' } }, required: ['city', 'metric'] },
    },
  ],
}
const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['name', 'age', 'tags'],
  additionalProperties: false,
}

describe('strict request fields', () => {
  it('OpenAI refuses an unknown top-level field the way the real API does', async () => {
    const res = await post(CHAT, chat({ temprature: 0.2 }))
    expect(res.status).toBe(400)
    expect(res.json).toEqual({
      error: { message: 'Unrecognized request argument supplied: temprature', type: 'invalid_request_error', param: null, code: null },
    })
  })

  it('OpenAI takes every documented field and the mock’s own `mock`', async () => {
    const res = await post(CHAT, chat({ temperature: 0.2, logit_bias: {}, user: 'u', metadata: {}, mock: { content: 'ok' } }))
    expect(res.status).toBe(200)
    expect(res.json.choices[0].message.content).toBe('ok')
  })

  it('Gemini refuses unknown top-level and generationConfig fields with Google’s 400', async () => {
    const res = await post(GEN, gemini({ model: 'x', generationConfig: { temperature: 1, max_tokens: 5 } }))
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
    expect(res.json.error.message).toContain('Unknown name "model": Cannot find field.')
    expect(res.json.error.message).toContain(`Unknown name "max_tokens" at 'generation_config': Cannot find field.`)
    expect(res.json.error.details[0]['@type']).toBe('type.googleapis.com/google.rpc.BadRequest')
  })

  it('Gemini takes snake_case names as well as camelCase ones', async () => {
    const res = await post(GEN, gemini({ system_instruction: { parts: [{ text: 's' }] }, generation_config: { top_k: 3, topP: 0.5 } }))
    expect(res.status).toBe(200)
  })
})

describe('tools', () => {
  it('OpenAI: a call to the first declared function, its arguments built from the schema', async () => {
    const res = await post(CHAT, chat({ tools: [WEATHER] }))
    const choice = res.json.choices[0]
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBeNull()
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_mock_/), type: 'function', function: { name: 'get_weather', arguments: expect.any(String) } },
    ])
    expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual({ city: 'text', days: 1, unit: 'c' })
  })

  it('mock.tool_name picks the declared tool the model calls, in every format', async () => {
    const clock = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }
    const viaChat = await post(CHAT, chat({ tools: [WEATHER, clock], mock: { tool_name: 'get_time' } }))
    expect(viaChat.json.choices[0].message.tool_calls[0].function.name).toBe('get_time')
    const geminiClock = { functionDeclarations: [...GEMINI_WEATHER.functionDeclarations, { name: 'get_time' }] }
    const viaGemini = await post(GEN, gemini({ tools: [geminiClock], mock: { tool_name: 'get_time' } }))
    expect(viaGemini.json.candidates[0].content.parts[0].functionCall.name).toBe('get_time')
  })

  it('OpenAI: instructions after the user’s turn (as agents send them) are no turn: the user still spoke last', async () => {
    const messages = [
      { role: 'user', content: 'what is the weather' },
      { role: 'system', content: 'Reminder: be brief.' },
    ]
    const res = await post(CHAT, chat({ tools: [WEATHER], messages }))
    expect(res.json.choices[0].message.tool_calls[0].function.name).toBe('get_weather')
  })

  it('OpenAI: mock.tool_arguments overrides, and tool results are quoted', async () => {
    const called = await post(CHAT, chat({ tools: [WEATHER], mock: { tool_arguments: { city: 'Oslo' } } }))
    const call = called.json.choices[0].message.tool_calls[0]
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' })
    const body = chat({ tools: [WEATHER] })
    body.messages = [
      ...(body.messages as unknown[]),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'rain, 9°C' },
    ]
    const res = await post(CHAT, body)
    expect(res.json.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Tool said: rain, 9°C' } })
  })

  it('OpenAI streams a tool call’s arguments in pieces', async () => {
    const res = await post(CHAT, chat({ tools: [WEATHER], stream: true, mock: { chunks: 3 } }))
    const chunks = openaiFrames(res.text)
      .filter((f) => f !== '[DONE]')
      .map((f) => JSON.parse(f))
    const deltas = chunks.flatMap((c) => c.choices.flatMap((ch: any) => ch.delta.tool_calls ?? []))
    expect(deltas[0]).toMatchObject({ index: 0, id: expect.any(String), function: { name: 'get_weather', arguments: '' } })
    expect(deltas.slice(1)).toHaveLength(3)
    expect(JSON.parse(deltas.map((d: any) => d.function.arguments).join(''))).toEqual({ city: 'text', days: 1, unit: 'c' })
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls')
  })

  it('Gemini: a whole functionCall part, whole or streamed, and function responses quoted', async () => {
    const res = await post(GEN, gemini({ tools: [GEMINI_WEATHER] }))
    expect(res.json.candidates[0].content.parts).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'text', metric: true } } }])
    const frames = geminiFrames((await post(STREAM_SSE, gemini({ tools: [GEMINI_WEATHER] }))).text)
    expect(frames).toHaveLength(1)
    expect(frames[0].candidates[0]).toMatchObject({ content: { parts: [{ functionCall: { name: 'get_weather' } }] }, finishReason: 'STOP' })
    const answered = await post(GEN, {
      tools: [GEMINI_WEATHER],
      contents: [
        { role: 'user', parts: [{ text: 'weather?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { sky: 'clear' } } }] },
      ],
    })
    expect(answered.json.candidates[0].content.parts).toEqual([{ text: 'Tool said: {"sky":"clear"}' }])
  })

  it('a function the tool choice names is the one called, in both formats', async () => {
    const other = { type: 'function', function: { name: 'other', parameters: { type: 'object', properties: {} } } }
    const chosen = await post(CHAT, chat({ tools: [WEATHER, other], tool_choice: { type: 'function', function: { name: 'other' } } }))
    expect(chosen.json.choices[0].message.tool_calls[0].function).toEqual({ name: 'other', arguments: '{}' })
    const tools = [{ functionDeclarations: [...GEMINI_WEATHER.functionDeclarations, { name: 'other' }] }]
    const toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['other'] } }
    const res = await post(GEN, gemini({ tools, toolConfig }))
    expect(res.json.candidates[0].content.parts).toEqual([{ functionCall: { name: 'other', args: {} } }])
  })

  it('Gemini: mock.thought_signature signs the call part', async () => {
    const res = await post(GEN, gemini({ tools: [GEMINI_WEATHER], mock: { thought_signature: 'c2ln' } }))
    expect(res.json.candidates[0].content.parts[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: 'c2ln' })
  })
})

describe('JSON output and images', () => {
  it('OpenAI json_schema: content valid against the schema', async () => {
    const res = await post(
      CHAT,
      chat({ response_format: { type: 'json_schema', json_schema: { name: 'person', schema: PERSON, strict: true } } }),
    )
    expect(JSON.parse(res.json.choices[0].message.content)).toEqual({ name: 'text', age: 1, tags: ['text'] })
  })

  it('Gemini responseSchema and responseJsonSchema: text valid against the schema', async () => {
    const subset = { type: 'OBJECT', properties: { ok: { type: 'BOOLEAN' } }, required: ['ok'] }
    const a = await post(GEN, gemini({ generationConfig: { responseMimeType: 'application/json', responseSchema: subset } }))
    expect(JSON.parse(a.json.candidates[0].content.parts[0].text)).toEqual({ ok: true })
    const b = await post(GEN, gemini({ generationConfig: { responseMimeType: 'application/json', responseJsonSchema: PERSON } }))
    expect(JSON.parse(b.json.candidates[0].content.parts[0].text)).toEqual({ name: 'text', age: 1, tags: ['text'] })
  })

  it('the echo says an image was received, in both formats', async () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, image] }] }
    expect((await post(CHAT, body)).json.choices[0].message.content).toBe('Echo: look (1 image received)')
    const parts = [
      { text: 'look' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { fileUri: 'https://x/y.png' } },
    ]
    const res = await post(GEN, { contents: [{ role: 'user', parts }] })
    expect(res.json.candidates[0].content.parts[0].text).toBe('Echo: look (2 images received)')
  })
})

describe('steering', () => {
  it('a body containing a steered marker gets its controls; its own `mock` fields win', async () => {
    mock.steer('steered-marker', { status: 429 })
    expect((await post(GEN, gemini({}, 'steered-marker'))).status).toBe(429)
    expect((await post(CHAT, chat({ mock: { status: 503 } }, 'steered-marker'))).status).toBe(503)
    mock.steer('steered-marker', undefined)
    expect((await post(GEN, gemini({}, 'steered-marker'))).status).toBe(200)
  })
})
