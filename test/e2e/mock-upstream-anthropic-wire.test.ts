import { describe, expect, it } from 'vitest'
import { CLAUDE_MODEL } from '../support/anthropic-sdks.js'
import { call, open } from '../support/http.js'
import { mock, post, startExtra, useFreshMock } from '../support/mock-upstream-harness.js'

// The mock's Messages API on the wire, byte by byte: the headers it requires, its errors, its named events and the
// per-request controls the other formats take.
useFreshMock()

const VERSION = { 'anthropic-version': '2023-06-01' }
const MESSAGES = '/v1/messages'
const claude = (extra: Record<string, unknown> = {}, text = 'hello claude') => ({
  model: CLAUDE_MODEL,
  max_tokens: 1024,
  messages: [{ role: 'user', content: text }],
  ...extra,
})
const send = (body: unknown, headers: Record<string, string> = VERSION, path = MESSAGES, base = mock.url) =>
  post(path, body, { headers }, base)
const anthropicError = (type: string, message: string | unknown = expect.any(String)) => ({
  type: 'error',
  error: { type, message },
  request_id: expect.stringMatching(/^req_/),
})
const WEATHER = { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

/** A stream's events as `[event name, parsed data]`, each asserted to be one `event:` line and one `data:` line. */
function events(text: string): Array<[string, any]> {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const [name, data, ...rest] = block.split('\n')
      expect(rest).toEqual([])
      expect(name).toMatch(/^event: \w+$/)
      expect(data).toMatch(/^data: \{/)
      const parsed = JSON.parse(data!.slice(6))
      expect(parsed.type).toBe(name!.slice(7))
      return [name!.slice(7), parsed]
    })
}

describe('streams', () => {
  it('the raw bytes carry every event type and delta type, each event named by an event: line', async () => {
    const thinking = { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048, stream: true }
    const text = await send(claude(thinking))
    const tool = await send(claude({ ...thinking, tools: [WEATHER] }))
    for (const res of [text, tool]) {
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
      expect(res.headers['request-id']).toMatch(/^req_/)
    }
    const all = [...events(text.text), ...events(tool.text)]
    expect(new Set(all.map(([name]) => name))).toEqual(
      new Set([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
        'ping',
      ]),
    )
    const deltas = new Set(all.filter(([name]) => name === 'content_block_delta').map(([, data]) => data.delta.type))
    expect(deltas).toEqual(new Set(['text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta']))
  })

  it('orders a stream as Anthropic does: start, blocks opened, filled and closed in turn, the cumulative usage, stop', async () => {
    const res = await send(claude({ stream: true, mock: { chunks: 3 } }))
    const list = events(res.text)
    expect(list.map(([name]) => name)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const start = list[0]![1]
    const block = list[1]![1]
    expect(start.message).toMatchObject({ id: expect.stringMatching(/^msg_/), content: [], stop_reason: null, stop_sequence: null })
    expect(start.message.usage).toMatchObject({ input_tokens: 3, cache_read_input_tokens: 0, output_tokens: 1 })
    expect(block).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    const whole = (await send(claude())).json
    expect(list.at(-2)![1]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: whole.usage.output_tokens },
    })
  })
})

describe('headers and errors', () => {
  it('without anthropic-version: 400, as the real API; the request id in the header and the body alike', async () => {
    const res = await send(claude(), {})
    expect(res.status).toBe(400)
    expect(res.json).toEqual(anthropicError('invalid_request_error', 'anthropic-version: header is required'))
    expect(res.json.request_id).toBe(res.headers['request-id'])
    expect((await send(claude(), { 'anthropic-version': '2099-01-01' })).json.error.type).toBe('invalid_request_error')
  })

  it('with an apiKey: x-api-key or a Bearer token; a missing or wrong one is a 401 authentication_error', async () => {
    const guarded = await startExtra({ apiKey: 'sk-ant-right' })
    const missing = await send(claude(), VERSION, MESSAGES, guarded.url)
    expect(missing.status).toBe(401)
    expect(missing.json).toEqual(anthropicError('authentication_error', 'x-api-key header is required'))
    const wrong = await send(claude(), { ...VERSION, 'x-api-key': 'sk-ant-wrong' }, MESSAGES, guarded.url)
    expect(wrong.json).toEqual(anthropicError('authentication_error', 'invalid x-api-key'))
    expect((await send(claude(), { ...VERSION, 'x-api-key': 'sk-ant-right' }, MESSAGES, guarded.url)).status).toBe(200)
    expect((await send(claude(), { ...VERSION, authorization: 'Bearer sk-ant-right' }, MESSAGES, guarded.url)).status).toBe(200)
    // x-api-key wins when both are sent.
    const both = { ...VERSION, 'x-api-key': 'sk-ant-wrong', authorization: 'Bearer sk-ant-right' }
    expect((await send(claude(), both, MESSAGES, guarded.url)).status).toBe(401)
    // The key is checked before the version.
    expect((await send(claude(), {}, MESSAGES, guarded.url)).status).toBe(401)
    const models = await call(`${guarded.url}/v1/models`, { headers: VERSION })
    expect(models.json).toEqual(anthropicError('authentication_error'))
  })

  it('refuses what Anthropic refuses: bad JSON, unknown fields, missing max_tokens, a thinking budget too big or small', async () => {
    const cases: Array<[unknown, string | RegExp]> = [
      ['{not json', /^There was an error parsing/],
      [claude({ n: 2 }), 'n: Extra inputs are not permitted'],
      [{ model: CLAUDE_MODEL, messages: [] }, 'max_tokens: Field required'],
      [{ max_tokens: 5, messages: [] }, 'model: Field required'],
      [claude({ max_tokens: -1 }), 'max_tokens: Input should be greater than or equal to 0'],
      [claude({ messages: [{ role: 'tool', content: 'x' }] }), /^messages\.0\.role: /],
      [claude({ thinking: { type: 'enabled', budget_tokens: 512 } }), /^thinking\.enabled\.budget_tokens: Input should be greater/],
      [claude({ thinking: { type: 'enabled', budget_tokens: 1024 } }), '`max_tokens` must be greater than `thinking.budget_tokens`'],
    ]
    for (const [body, message] of cases) {
      const res = await send(body)
      expect(res.status).toBe(400)
      expect(res.json).toEqual(
        anthropicError('invalid_request_error', typeof message === 'string' ? message : expect.stringMatching(message)),
      )
    }
    const newest = { 'anthropic-version': '2026-10-21' }
    expect((await send(claude({ top_k: 5 }), newest)).json.error.message).toBe('top_k: Extra inputs are not permitted')
    expect((await send(claude({ top_k: 5, temperature: 0.2, top_p: 0.5 }))).status).toBe(200)
  })

  it('count_tokens takes no max_tokens or stream, and answers { input_tokens }', async () => {
    const bad = await send(claude(), VERSION, '/v1/messages/count_tokens')
    expect(bad.json).toEqual(anthropicError('invalid_request_error', 'max_tokens: Extra inputs are not permitted'))
    const { max_tokens: _max, ...prompt } = claude()
    const counted = await send(prompt, VERSION, '/v1/messages/count_tokens')
    expect(counted.status).toBe(200)
    expect(counted.json).toEqual({ input_tokens: 3 })
  })

  it('GET /v1/models answers in Anthropic’s shape to Anthropic clients only; an unknown path in Anthropic’s 404', async () => {
    const anthropic = await call(`${mock.url}/v1/models`, { headers: VERSION })
    expect(anthropic.headers['request-id']).toMatch(/^req_/)
    expect(anthropic.json).toEqual({
      data: expect.arrayContaining([{ type: 'model', id: CLAUDE_MODEL, display_name: 'Claude Haiku 4.5', created_at: expect.any(String) }]),
      has_more: false,
      first_id: anthropic.json.data[0].id,
      last_id: anthropic.json.data.at(-1).id,
    })
    expect((await call(`${mock.url}/v1/models`)).json.object).toBe('list')
    const page = await call(`${mock.url}/v1/models?limit=1&after_id=${anthropic.json.data[0].id}`, { headers: VERSION })
    expect(page.json).toMatchObject({ data: [anthropic.json.data[1]], has_more: true })
    const before = await call(`${mock.url}/v1/models?before_id=${anthropic.json.last_id}`, { headers: VERSION })
    expect(before.json.data).toEqual(anthropic.json.data.slice(0, -1))
    const missing = await call(`${mock.url}/v1/nope`, { headers: VERSION })
    expect(missing.status).toBe(404)
    expect(missing.json).toEqual(anthropicError('not_found_error'))
  })
})

describe('answers', () => {
  it('Claude Code’s ?beta=true path, stop sequences, JSON output formats and images', async () => {
    const beta = await send(claude(), VERSION, `${MESSAGES}?beta=true`)
    expect(beta.json.content).toEqual([{ type: 'text', text: 'Echo: hello claude' }])
    expect(mock.requests[0]!.path).toBe('/v1/messages?beta=true')
    const stopped = (await send(claude({ stop_sequences: ['zz', 'claude'] }))).json
    expect(stopped).toMatchObject({
      content: [{ type: 'text', text: 'Echo: hello ' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'claude',
    })
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }
    const json = (await send(claude({ output_config: { format: { type: 'json_schema', schema } } }))).json
    expect(JSON.parse(json.content[0].text)).toEqual({ n: 1 })
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const seen = (await send(claude({ messages: [{ role: 'user', content: [image, { type: 'text', text: 'what is it?' }] }] }))).json
    expect(seen.content[0].text).toBe('Echo: what is it? (1 image received)')
  })

  it('records each call with its headers, body and answer', async () => {
    const body = claude()
    const res = await send(body, { ...VERSION, 'anthropic-beta': 'interleaved-thinking-2025-05-14' })
    const [recorded] = mock.requests
    expect(recorded).toMatchObject({ method: 'POST', path: MESSAGES, body: JSON.stringify(body), response: res.text })
    expect(recorded!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
    await mock.waitFor(() => mock.completedCalls === 1)
  })
})

describe('controls', () => {
  it('usage is merged, cache counts included, into the message and into both message_start and message_delta', async () => {
    const usage = { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 30, output_tokens: 7 }
    const whole = (await send(claude({ mock: { usage } }))).json
    expect(whole.usage).toEqual({ ...usage, cache_creation: expect.any(Object), service_tier: 'standard' })
    const list = events((await send(claude({ stream: true, mock: { usage } }))).text)
    expect(list[0]![1].message.usage).toMatchObject({ ...usage, output_tokens: 1 })
    expect(list.at(-2)![1].usage).toEqual(usage)
  })

  it('status (with or without error_body), headers, delay_ms, content and content_bytes', async () => {
    const overloaded = await send(claude({ mock: { status: 529, headers: { 'retry-after': '2' } } }))
    expect(overloaded.status).toBe(529)
    expect(overloaded.headers['retry-after']).toBe('2')
    expect(overloaded.headers['request-id']).toMatch(/^req_/)
    expect(overloaded.json).toEqual(anthropicError('overloaded_error'))
    const custom = await send(
      claude({ mock: { status: 429, error_body: { type: 'error', error: { type: 'rate_limit_error', message: 'x' } } } }),
    )
    expect(custom.json).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'x' } })
    const t0 = Date.now()
    const slow = await send(claude({ mock: { delay_ms: 120, content: 'exact reply' } }))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110)
    expect(slow.json.content).toEqual([{ type: 'text', text: 'exact reply' }])
    const big = events((await send(claude({ stream: true, mock: { content_bytes: 100_000, chunks: 4 } }))).text)
    const text = big.filter(([name]) => name === 'content_block_delta').map(([, data]) => data.delta.text)
    expect(text).toHaveLength(4)
    expect(Buffer.byteLength(text.join(''))).toBe(100_000)
  })

  it('chunk_delay_ms paces the events; destroy_after_frames cuts the stream; destroy and hang never answer', async () => {
    const paced = await open(`${mock.url}${MESSAGES}`, {
      headers: VERSION,
      body: claude({ stream: true, mock: { chunks: 2, chunk_delay_ms: 30 } }),
    })
    const arrivals: Array<{ t: number; text: string }> = []
    for await (const bytes of paced.body) arrivals.push({ t: Date.now(), text: String(bytes) })
    // start, block start, ping, 2 deltas, block stop, message delta, stop: each in its own read, 30 ms apart.
    expect(arrivals).toHaveLength(8)
    // Timed as a whole: on a loaded machine one late read shortens the gap after it, never the total.
    expect(arrivals.at(-1)!.t - arrivals[0]!.t).toBeGreaterThanOrEqual(7 * 30 - 15)
    expect(events(arrivals.map((a) => a.text).join(''))).toHaveLength(8)
    await expect(send(claude({ stream: true, mock: { destroy_after_frames: 3 } }))).rejects.toThrow()
    expect(mock.requests.at(-1)!.response.split('\n\n').filter(Boolean)).toHaveLength(3)
    await expect(send(claude({ mock: { destroy: true } }))).rejects.toThrow()
    const ac = new AbortController()
    const hanging = post(MESSAGES, claude({ stream: true, mock: { hang: true } }), { headers: VERSION, signal: ac.signal })
    await mock.waitFor(() => mock.requests.length === 4)
    ac.abort()
    await expect(hanging).rejects.toThrow()
    await mock.waitFor(() => mock.abortedStreams === 1)
  })
})

describe('mock.tool_name', () => {
  it('picks the declared tool a message calls, whatever comes first', async () => {
    const clock = { name: 'get_time', input_schema: { type: 'object', properties: {} } }
    const res = await send(claude({ tools: [WEATHER, clock], mock: { tool_name: 'get_time' } }))
    expect(res.status).toBe(200)
    expect(res.json.stop_reason).toBe('tool_use')
    expect(res.json.content.find((block: { type: string }) => block.type === 'tool_use').name).toBe('get_time')
  })
})
