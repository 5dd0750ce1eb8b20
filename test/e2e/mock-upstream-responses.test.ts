import { describe, expect, it } from 'vitest'
import { mock, post, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

const RESPONSES = '/v1/responses'
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}

/** The events of a Responses stream, each asserted to be `event: <type>` then one `data:` line naming the same type. */
function events(text: string): any[] {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n')
      expect(rest).toEqual([])
      expect(dataLine?.startsWith('data: ')).toBe(true)
      const data = JSON.parse(dataLine!.slice(6))
      expect(eventLine).toBe(`event: ${data.type}`)
      return data
    })
}

describe('POST /v1/responses', () => {
  it('answers a response object with a message echoing the input, usage and the request’s settings', async () => {
    const res = await post(RESPONSES, { model: 'gpt-4o-mini', input: 'ping', instructions: 'be brief', temperature: 0.5 })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json')
    expect(res.json).toMatchObject({
      id: expect.stringMatching(/^resp_mock_\d+$/),
      object: 'response',
      status: 'completed',
      instructions: 'be brief',
      temperature: 0.5,
      model: 'gpt-4o-mini',
      output: [
        {
          id: expect.stringMatching(/^msg_mock_\d+$/),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Echo: ping' }],
        },
      ],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    })
    expect(res.json.usage.total_tokens).toBe(res.json.usage.input_tokens + res.json.usage.output_tokens)
  })

  it('echoes the last user message of an item list, counting its images', async () => {
    const input = [
      { role: 'user', content: 'first' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png' },
        ],
      },
    ]
    expect((await post(RESPONSES, { model: 'm', input })).json.output[0].content[0].text).toBe('Echo: look (1 image received)')
  })

  it('refuses a field the Responses API does not know, as OpenAI does', async () => {
    const res = await post(RESPONSES, { model: 'm', input: 'x', messages: [] })
    expect(res.status).toBe(400)
    expect(res.json).toEqual({
      error: { message: "Unknown parameter: 'messages'.", type: 'invalid_request_error', param: 'messages', code: 'unknown_parameter' },
    })
  })

  it('calls the declared function when the user spoke last, and quotes its output after a function_call_output', async () => {
    const first = (await post(RESPONSES, { model: 'm', input: 'weather?', tools: [WEATHER] })).json
    expect(first.output).toEqual([
      {
        id: expect.stringMatching(/^fc_mock_/),
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"text"}',
        call_id: expect.stringMatching(/^call_mock_/),
        name: 'get_weather',
      },
    ])
    const input = ['weather?', first.output[0], { type: 'function_call_output', call_id: first.output[0].call_id, output: 'sunny' }]
    const second = await post(RESPONSES, { model: 'm', input: [{ role: 'user', content: input[0] }, ...input.slice(1)], tools: [WEATHER] })
    expect(second.json.output[0].content[0].text).toBe('Tool said: sunny')
    const none = await post(RESPONSES, { model: 'm', input: 'weather?', tools: [WEATHER], tool_choice: 'none' })
    expect(none.json.output[0].type).toBe('message')
  })

  it('answers a json_schema text format with JSON valid against the schema', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }
    const res = await post(RESPONSES, { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 's', schema } } })
    expect(JSON.parse(res.json.output[0].content[0].text)).toEqual({ n: 1 })
  })

  it('streams typed events numbered from 0: created, the message’s deltas, completed with the whole response', async () => {
    const res = await post(RESPONSES, { model: 'gpt-4o-mini', input: 'ping', stream: true, mock: { chunks: 3 } })
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    const all = events(res.text)
    expect(all.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i))
    expect(all[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null })
    const deltas = all.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)
    expect(deltas.join('')).toBe('Echo: ping')
    const plain = (await post(RESPONSES, { model: 'gpt-4o-mini', input: 'ping' })).json
    expect(all.at(-1).response).toMatchObject({
      status: 'completed',
      output: plain.output.map(() => expect.any(Object)),
      usage: plain.usage,
    })
  })

  it('streams a function call: the item added, argument deltas, the arguments done, the item done', async () => {
    const res = await post(RESPONSES, { model: 'm', input: 'weather?', tools: [WEATHER], stream: true, mock: { chunks: 2 } })
    const all = events(res.text)
    expect(all.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(all[2].item).toMatchObject({ type: 'function_call', status: 'in_progress', arguments: '', name: 'get_weather' })
    expect(all[5].arguments).toBe('{"city":"text"}')
  })

  it('records what it answered, stream frames included', async () => {
    const res = await post(RESPONSES, { model: 'm', input: 'rec', stream: true })
    expect(mock.requests.at(-1)?.response).toBe(res.text)
  })
})
