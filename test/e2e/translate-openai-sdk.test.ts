import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { bearer, type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { OPENAI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

// The `openai` SDK, unchanged, calling the fixture's Gemini-upstream model: every request and answer is translated.
const MODEL = 'gemini-2.5-flash'
const CHAT = '/v1/chat/completions'

let fx: Fixture
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { onUsage: (u) => usage.push(u) })
})
afterAll(() => fx.close())

/** The upstream requests whose body carries `marker`, their bodies parsed: what the gateway sent Gemini. */
const upstream = (marker: string) =>
  fx.mock.requests.filter((r) => r.body.includes(marker)).map((r) => ({ path: r.path, headers: r.headers, body: JSON.parse(r.body) }))

/** The one upstream request of a scenario: on the Gemini route, with the gateway's key. */
function onlyUpstream(marker: string, method = 'generateContent') {
  const [request, ...more] = upstream(marker)
  expect(more).toHaveLength(0)
  expect(request?.path).toBe(`/v1beta/models/${MODEL}:${method}`)
  expect(request?.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
  return request!
}

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['name', 'age', 'tags'],
  additionalProperties: false,
}

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='

describe.each(OPENAI_SDKS)('%s against a Gemini-upstream model', (name, load) => {
  const client = async (options: { maxRetries?: number } = {}) => {
    const OpenAI = await load()
    return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, ...options })
  }

  it('chat.completions.create: a chat.completion with the echo, usage and the model’s name', async () => {
    const marker = `text ${name}`
    const completion = await (await client()).chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: marker },
      ],
      temperature: 0.3,
      max_completion_tokens: 50,
    })
    expect(completion.object).toBe('chat.completion')
    expect(completion.model).toBe(MODEL)
    expect(completion.choices).toEqual([
      expect.objectContaining({
        index: 0,
        finish_reason: 'stop',
        message: expect.objectContaining({ role: 'assistant', content: `Echo: ${marker}` }),
      }),
    ])
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0)
    expect(completion.usage?.total_tokens).toBe((completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0))
    expect(onlyUpstream(marker).body).toEqual({
      contents: [{ role: 'user', parts: [{ text: marker }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 50 },
    })
  })

  it('a stream with stream_options.include_usage: deltas, then the usage chunk; the SDK ends at [DONE]', async () => {
    const marker = `stream ${name}`
    const stream = await (await client()).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    const finishes: unknown[] = []
    const usages: unknown[] = []
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk')
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? ''
        if (choice.finish_reason) finishes.push(choice.finish_reason)
      }
      if (chunk.usage) usages.push(chunk.usage)
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(finishes).toEqual(['stop'])
    expect(usages).toEqual([expect.objectContaining({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) })])
    expect(onlyUpstream(marker, 'streamGenerateContent?alt=sse').body).toEqual({ contents: [{ role: 'user', parts: [{ text: marker }] }] })
  })

  it('runTools: the model’s call runs the function, its result goes back, the final answer quotes it', async () => {
    const marker = `tools ${name}`
    const calls: unknown[] = []
    const runner = (await client()).chat.completions.runTools({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            parse: JSON.parse,
            function: (args: unknown) => {
              calls.push(args)
              return '22 degrees and sunny'
            },
          },
        },
      ],
    })
    expect(await runner.finalContent()).toBe('Tool said: {"output":"22 degrees and sunny"}')
    expect(calls).toEqual([{ city: 'text' }])
    const [first, second, ...more] = upstream(marker)
    expect(more).toHaveLength(0)
    expect(first?.body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
          },
        ],
      },
    ])
    expect(first?.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } })
    // The SDK's tool call id (made by the gateway: Gemini sent none) comes back on both the call and its result.
    const toolCall = runner.messages.flatMap((m) => ('tool_calls' in m ? (m.tool_calls ?? []) : []))[0]
    expect(toolCall?.id).toEqual(expect.stringMatching(/^call_/))
    expect(second?.body.contents).toEqual([
      { role: 'user', parts: [{ text: marker }] },
      { role: 'model', parts: [{ functionCall: { id: toolCall?.id, name: 'get_weather', args: { city: 'text' } } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { id: toolCall?.id, name: 'get_weather', response: { output: '22 degrees and sunny' } } }],
      },
    ])
  })

  it('runTools with stream: true: the streamed call’s argument deltas are put together, the final answer streams', async () => {
    const marker = `streamed tools ${name}`
    const calls: unknown[] = []
    const runner = (await client()).chat.completions.runTools({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'Looks a record up',
            parameters: { type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } },
            parse: JSON.parse,
            function: (args: unknown) => {
              calls.push(args)
              return { found: true }
            },
          },
        },
      ],
    })
    expect(await runner.finalContent()).toBe('Tool said: {"found":true}')
    expect(calls).toEqual([{ id: 1, tags: ['text'] }])
    const paths = upstream(marker).map((r) => r.path)
    expect(paths).toEqual([
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    ])
    expect(upstream(marker)[1]?.body.contents[2].parts[0].functionResponse).toMatchObject({ name: 'lookup', response: { found: true } })
  })

  it('a manual tool loop with create(): the assistant message sent back as received keeps Gemini’s thought signature', async () => {
    const marker = `signed tools ${name}`
    fx.mock.steer(marker, { thought_signature: 'c2lnbmVk' })
    const openai = await client()
    const tools = [{ type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }]
    const messages: Parameters<typeof openai.chat.completions.create>[0]['messages'] = [{ role: 'user', content: marker }]
    const first = await openai.chat.completions.create({ model: MODEL, messages, tools })
    const message = first.choices[0]!.message
    expect(first.choices[0]?.finish_reason).toBe('tool_calls')
    const toolCall = message.tool_calls?.[0]
    expect(toolCall).toMatchObject({ type: 'function', function: { name: 'get_time', arguments: '{}' } })
    messages.push(message, { role: 'tool', tool_call_id: toolCall!.id, content: 'noon' })
    const final = await openai.chat.completions.create({ model: MODEL, messages, tools })
    expect(final.choices[0]?.message.content).toBe('Tool said: {"output":"noon"}')
    const modelTurn = upstream(marker)[1]?.body.contents[1]
    expect(modelTurn).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: toolCall!.id, name: 'get_time', args: {} }, thoughtSignature: 'c2lnbmVk' }],
    })
  })

  it('a manual tool loop with the .stream() helper: the streamed call is put together, its result answered', async () => {
    const marker = `stream helper tools ${name}`
    const openai = await client()
    const tools = [WEATHER_TOOL]
    const messages: Parameters<typeof openai.chat.completions.create>[0]['messages'] = [{ role: 'user', content: marker }]
    const first = await openai.chat.completions.stream({ model: MODEL, messages, tools }).finalChatCompletion()
    const toolCall = first.choices[0]?.message.tool_calls?.[0]
    expect(first.choices[0]?.finish_reason).toBe('tool_calls')
    expect(toolCall).toMatchObject({ type: 'function', function: { name: 'get_weather' } })
    expect(JSON.parse(toolCall?.type === 'function' ? toolCall.function.arguments : '')).toEqual({ city: 'text' })
    messages.push(
      { role: 'assistant', content: null, tool_calls: [toolCall!] },
      { role: 'tool', tool_call_id: toolCall!.id, content: 'sunny' },
    )
    const final = await openai.chat.completions.stream({ model: MODEL, messages, tools }).finalContent()
    expect(final).toBe('Tool said: {"output":"sunny"}')
    expect(upstream(marker).map((r) => r.path)).toEqual([
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    ])
  })

  it('tool_choice naming a function: Gemini is told to call only that one (mode ANY), and does', async () => {
    const marker = `forced tool ${name}`
    const other = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }
    const completion = await (await client()).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      tools: [WEATHER_TOOL, other],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    })
    const call = completion.choices[0]?.message.tool_calls?.[0]
    expect(call?.type === 'function' && call.function).toEqual({ name: 'get_time', arguments: '{}' })
    expect(onlyUpstream(marker).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } })
  })

  it('chat.completions.parse with a json_schema response format: the parsed object', async () => {
    const marker = `json ${name}`
    const completion = await (await client()).chat.completions.parse({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema: PERSON, strict: true } },
    })
    expect(completion.choices[0]?.message.parsed).toEqual({ name: 'text', age: 1, tags: ['text'] })
    const config = onlyUpstream(marker).body.generationConfig
    expect(config.responseMimeType).toBe('application/json')
    expect(config.responseSchema ?? config.responseJsonSchema).toMatchObject({ required: ['name', 'age', 'tags'] })
  })

  it('an image as a data: URL reaches Gemini as inlineData', async () => {
    const marker = `image ${name}`
    const completion = await (await client()).chat.completions.create({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: marker },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
          ],
        },
      ],
    })
    expect(completion.choices[0]?.message.content).toBe(`Echo: ${marker} (1 image received)`)
    expect(onlyUpstream(marker).body.contents).toEqual([
      { role: 'user', parts: [{ text: marker }, { inlineData: { mimeType: 'image/png', data: PIXEL } }] },
    ])
  })

  it('logit_bias, which Gemini cannot express: a 400 naming it, nothing sent upstream', async () => {
    const marker = `logit bias ${name}`
    const request = (await client()).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
      logit_bias: { '50256': -100 },
    })
    await expect(request).rejects.toMatchObject({ status: 400, param: 'logit_bias' })
    expect(upstream(marker)).toHaveLength(0)
  })

  it('the SDK timing out and retrying gets the translated answer of one upstream call, billed once', async () => {
    const marker = `sdk retry ${name}`
    fx.mock.steer(marker, { delay_ms: 2500 })
    const OpenAI = await load()
    const openai = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, timeout: 1000 })
    const before = usage.length
    const completion = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: marker }] })
    expect(completion.choices[0]?.message.content).toBe(`Echo: ${marker}`)
    // Three attempts from the SDK, one call upstream.
    expect(upstream(marker)).toHaveLength(1)
    await eventually(() => usage.length > before)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(usage.slice(before).filter((u) => u.model === MODEL)).toHaveLength(1)
  })

  it('an upstream 429 reaches the SDK as its RateLimitError, in OpenAI’s shape', async () => {
    const marker = `rate limited ${name}`
    fx.mock.steer(marker, { status: 429 })
    const OpenAI = await load()
    const request = (await client({ maxRetries: 0 })).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: marker }],
    })
    await expect(request).rejects.toBeInstanceOf(OpenAI.RateLimitError)
    await expect(request).rejects.toMatchObject({ status: 429, error: { type: 'rate_limit_error', message: expect.any(String) } })
    expect(upstream(marker)).toHaveLength(1)
  })
})

describe('translated calls over plain HTTP', () => {
  it('an upstream 429 comes back in OpenAI’s shape with its status, stream or not', async () => {
    fx.mock.steer('plain 429', { status: 429 })
    for (const stream of [false, true]) {
      const res = await call(`${fx.url}${CHAT}`, {
        headers: bearer(KEY_A),
        body: { model: MODEL, messages: [{ role: 'user', content: 'plain 429' }], stream },
      })
      expect(res.status).toBe(429)
      expect(res.headers['content-type']).toBe('application/json')
      expect(res.json).toEqual({
        error: { message: 'Mock upstream error (status 429).', type: 'rate_limit_error', param: null, code: 'RESOURCE_EXHAUSTED' },
      })
    }
  })

  it('a call the client left is kept as a chat.completion record, and onUsage reports the upstream’s tokens once', async () => {
    const marker = 'left translated call'
    fx.mock.steer(marker, { delay_ms: 300 })
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: marker }] })
    await sendThenAbort(`${fx.url}${CHAT}`, { headers: bearer(KEY_A), body, afterMs: 50 })
    const found = await eventually(async () => {
      const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: JSON.parse(body) })
      return lookup.json.items[0] as { request_id: string } | undefined
    })
    const record = (await call(`${fx.url}/v1/recoveries/${found.request_id}`, { headers: bearer(KEY_A) })).json
    expect(record.request).toMatchObject({ body_raw: body, path: CHAT, model: MODEL })
    expect(record.response).toMatchObject({ status: 200, content_type: 'application/json' })
    const answer = JSON.parse(record.response.body_raw)
    expect(answer).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Echo: ${marker}` } }],
    })
    const [sent] = upstream(marker)
    expect(sent?.path).toBe(`/v1beta/models/${MODEL}:generateContent`)
    const events = await eventually(() => {
      const mine = usage.filter((u) => u.requestId === found.request_id)
      return mine.length > 0 ? mine : undefined
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(usage.filter((u) => u.requestId === found.request_id)).toEqual(events)
    expect(events).toEqual([
      expect.objectContaining({
        model: MODEL,
        endpoint: 'chat.completions',
        recovered: true,
        input_tokens: answer.usage.prompt_tokens,
        output_tokens: answer.usage.completion_tokens,
      }),
    ])
  })
})
