import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { type Fixture, KEY_A, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { eventually } from '../support/http.js'
import { OPENAI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

// The `openai` SDK, unchanged, calling `POST /v1/responses`: passthrough to the fixture's OpenAI-upstream model,
// translated to its Gemini-upstream one.
const OPENAI_MODEL = 'gpt-4o-mini'
const GEMINI_MODEL = 'gemini-2.5-flash'

let fx: Fixture
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { onUsage: (u) => usage.push(u) })
})
afterAll(() => fx.close())

/** The upstream requests whose body carries `marker`. */
const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))

/** The one upstream request of a scenario, its body parsed. */
function onlyUpstream(marker: string) {
  const [request, ...more] = upstream(marker)
  expect(more).toHaveLength(0)
  return { ...request!, json: JSON.parse(request!.body) }
}

/** The usage events of the calls whose upstream request carried `marker`, once the last one arrived. */
async function usageOf(requestIds: string[]): Promise<UsageEvent[]> {
  await eventually(() => requestIds.every((id) => usage.some((u) => u.requestId === id)))
  return usage.filter((u) => requestIds.includes(u.requestId))
}

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
}

describe.each(OPENAI_SDKS)('%s responses.create, passthrough to an OpenAI-upstream model', (name, load) => {
  const client = async () => {
    const OpenAI = await load()
    return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A })
  }

  it('answers with the upstream’s bytes, byte for byte, from its /v1/responses with the gateway’s key', async () => {
    const marker = `pass plain ${name}`
    const raw = await (await client()).responses.create({ model: OPENAI_MODEL, input: marker, instructions: 'be brief' }).asResponse()
    const text = await raw.text()
    const sent = onlyUpstream(marker)
    expect(sent.path).toBe('/v1/responses')
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    expect(text).toBe(sent.response)
    expect(JSON.parse(text)).toMatchObject({ object: 'response', status: 'completed', model: OPENAI_MODEL })
    const [counted] = await usageOf([raw.headers.get('x-request-id')!])
    const body = JSON.parse(text)
    expect(counted).toMatchObject({ endpoint: 'responses', input_tokens: body.usage.input_tokens, output_tokens: body.usage.output_tokens })
  })

  it('the SDK reads the passthrough answer: output_text, and the model renamed upstream', async () => {
    const marker = `pass parsed ${name}`
    const response = await (await client()).responses.create({ model: 'renamed', input: marker })
    expect(response.output_text).toBe(`Echo: ${marker}`)
    expect(onlyUpstream(marker).json.model).toBe('upstream-name')
  })

  it('streams every event byte for byte as the upstream sent it, and the SDK reads the typed events', async () => {
    const marker = `pass stream ${name}`
    const openai = await client()
    const raw = await openai.responses.create({ model: OPENAI_MODEL, input: marker, stream: true }).asResponse()
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const text = await raw.text()
    expect(text).toBe(onlyUpstream(marker).response)
    const [counted] = await usageOf([raw.headers.get('x-request-id')!])
    const completed = JSON.parse(/event: response\.completed\ndata: (.*)/.exec(text)![1]!)
    expect(counted).toMatchObject({ endpoint: 'responses', input_tokens: completed.response.usage.input_tokens })

    const second = `pass stream parsed ${name}`
    let deltas = ''
    const types: string[] = []
    for await (const event of await openai.responses.create({ model: OPENAI_MODEL, input: second, stream: true })) {
      types.push(event.type)
      if (event.type === 'response.output_text.delta') deltas += event.delta
    }
    expect(deltas).toBe(`Echo: ${second}`)
    expect(types[0]).toBe('response.created')
    expect(types.at(-1)).toBe('response.completed')
  })

  it('a function tool: the model’s call, its output sent back with the call, the final answer quoting it', async () => {
    const marker = `pass tools ${name}`
    const openai = await client()
    const first = await openai.responses.create({ model: OPENAI_MODEL, input: marker, tools: [WEATHER] })
    const call = first.output.find((item) => item.type === 'function_call')
    expect(first.output).toHaveLength(1)
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"text"}' })
    const final = await openai.responses.create({
      model: OPENAI_MODEL,
      input: [{ role: 'user', content: marker }, call!, { type: 'function_call_output', call_id: call!.call_id, output: 'sunny' }],
      tools: [WEATHER],
    })
    expect(final.output_text).toBe('Tool said: sunny')
    expect(upstream(marker).map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses'])
  })
})

describe.each(OPENAI_SDKS)('%s responses.create, translated to a Gemini-upstream model', (name, load) => {
  const client = async (options: { maxRetries?: number; timeout?: number } = {}) => {
    const OpenAI = await load()
    return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, ...options })
  }

  it('answers a Responses object: output_text, usage, the instructions as Gemini’s system instruction', async () => {
    const marker = `gem plain ${name}`
    const response = await (await client()).responses.create({
      model: GEMINI_MODEL,
      input: marker,
      instructions: 'be brief',
      temperature: 0.3,
      max_output_tokens: 50,
    })
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: GEMINI_MODEL, instructions: 'be brief', store: false })
    expect(response.output_text).toBe(`Echo: ${marker}`)
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0))
    const sent = onlyUpstream(marker)
    expect(sent.path).toBe(`/v1beta/models/${GEMINI_MODEL}:generateContent`)
    expect(sent.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: marker }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 50 },
    })
  })

  it('streams Responses events built from Gemini’s: numbered from 0, deltas, then response.completed with the usage', async () => {
    const marker = `gem stream ${name}`
    const events: Array<{ type: string; sequence_number: number }> = []
    let deltas = ''
    let completed: unknown
    for await (const event of await (await client()).responses.create({ model: GEMINI_MODEL, input: marker, stream: true })) {
      events.push(event)
      if (event.type === 'response.output_text.delta') deltas += event.delta
      if (event.type === 'response.completed') completed = event.response
    }
    expect(deltas).toBe(`Echo: ${marker}`)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events.slice(0, 4).map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ])
    expect(completed).toMatchObject({ status: 'completed', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } })
    expect(onlyUpstream(marker).path).toBe(`/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`)
  })

  it('the .stream() helper puts the translated events together into the final response', async () => {
    const marker = `gem stream helper ${name}`
    const final = await (await client()).responses.stream({ model: GEMINI_MODEL, input: marker }).finalResponse()
    expect(final.output_text).toBe(`Echo: ${marker}`)
    expect(final.status).toBe('completed')
  })

  it('a manual tool loop: the function_call item sent back as received, its output answered by Gemini', async () => {
    const marker = `gem tools ${name}`
    const openai = await client()
    const first = await openai.responses.create({ model: GEMINI_MODEL, input: marker, tools: [WEATHER] })
    const call = first.output.find((item) => item.type === 'function_call')
    expect(first.output).toHaveLength(1)
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"text"}', status: 'completed' })
    const final = await openai.responses.create({
      model: GEMINI_MODEL,
      input: [{ role: 'user', content: marker }, call!, { type: 'function_call_output', call_id: call!.call_id, output: 'sunny' }],
      tools: [WEATHER],
    })
    expect(final.output_text).toBe('Tool said: {"output":"sunny"}')
    const [one, two] = upstream(marker).map((r) => JSON.parse(r.body))
    expect(one.toolConfig).toEqual({ functionCallingConfig: { mode: 'VALIDATED' } })
    expect(two.contents).toEqual([
      { role: 'user', parts: [{ text: marker }] },
      { role: 'model', parts: [{ functionCall: { id: call!.call_id, name: 'get_weather', args: { city: 'text' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: call!.call_id, name: 'get_weather', response: { output: 'sunny' } } }] },
    ])
  })

  it('a streamed function call: output_item.added, the arguments, then the item done', async () => {
    const marker = `gem stream tools ${name}`
    const types: string[] = []
    let args = ''
    for await (const event of await (await client()).responses.create({
      model: GEMINI_MODEL,
      input: marker,
      tools: [WEATHER],
      stream: true,
    })) {
      types.push(event.type)
      if (event.type === 'response.function_call_arguments.done') args = event.arguments
    }
    expect(types).toContain('response.output_item.added')
    expect(types.indexOf('response.function_call_arguments.delta')).toBeLessThan(types.indexOf('response.function_call_arguments.done'))
    expect(JSON.parse(args)).toEqual({ city: 'text' })
  })

  it('text.format json_schema: Gemini is asked for JSON by that schema, the answer parses', async () => {
    const marker = `gem json ${name}`
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }
    const response = await (await client()).responses.create({
      model: GEMINI_MODEL,
      input: marker,
      text: { format: { type: 'json_schema', name: 'person', schema, strict: true } },
    })
    expect(JSON.parse(response.output_text)).toEqual({ name: 'text' })
    expect(onlyUpstream(marker).json.generationConfig.responseMimeType).toBe('application/json')
  })

  it('previous_response_id, which needs OpenAI’s stored responses: a 400 naming it, nothing sent upstream', async () => {
    const marker = `gem previous ${name}`
    const request = (await client()).responses.create({ model: GEMINI_MODEL, input: marker, previous_response_id: 'resp_abc' })
    await expect(request).rejects.toMatchObject({ status: 400, param: 'previous_response_id', code: 'invalid_request' })
    expect(upstream(marker)).toHaveLength(0)
  })

  it('a built-in tool Gemini’s format does not have (file_search): a 400 naming it', async () => {
    const marker = `gem file search ${name}`
    const request = (await client()).responses.create({
      model: GEMINI_MODEL,
      input: marker,
      tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }],
    })
    await expect(request).rejects.toMatchObject({ status: 400, param: 'tools[0].type' })
    expect(upstream(marker)).toHaveLength(0)
  })

  it('web search offered to the model: dropped, named in x-model-gateway-dropped, and the model answers without it', async () => {
    const marker = `gem web search ${name}`
    const { data, response } = await (await client()).responses
      .create({ model: GEMINI_MODEL, input: marker, tools: [{ type: 'web_search' }] })
      .withResponse()
    expect(data.output_text).toBe(`Echo: ${marker}`)
    expect(response.headers.get('x-model-gateway-dropped')).toBe('tools[0]')
    expect(upstream(marker)).toHaveLength(1)
  })

  it('the SDK timing out and retrying gets the answer of one upstream call, billed once', async () => {
    const marker = `gem sdk retry ${name}`
    fx.mock.steer(marker, { delay_ms: 2500 })
    const before = usage.length
    const response = await (await client({ timeout: 1000 })).responses.create({ model: GEMINI_MODEL, input: marker })
    expect(response.output_text).toBe(`Echo: ${marker}`)
    expect(upstream(marker)).toHaveLength(1)
    await eventually(() => usage.length > before)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(usage.slice(before).filter((u) => u.endpoint === 'responses')).toHaveLength(1)
  })

  it('an upstream 429 reaches the SDK as its RateLimitError, in OpenAI’s shape', async () => {
    const marker = `gem rate limited ${name}`
    fx.mock.steer(marker, { status: 429 })
    const OpenAI = await load()
    const request = (await client({ maxRetries: 0 })).responses.create({ model: GEMINI_MODEL, input: marker })
    await expect(request).rejects.toBeInstanceOf(OpenAI.RateLimitError)
    expect(upstream(marker)).toHaveLength(1)
  })
})
