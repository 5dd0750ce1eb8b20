import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { requestBodyHash } from '../../src/json/hash.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { CLAUDE_MODEL, langchainClaude, langchainText, VERCEL_ANTHROPIC_LEGS } from '../support/anthropic-sdks.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents, sseEvents } from '../support/sse-client.js'

// The Anthropic clients through the gateway to a Claude model on the mock upstream (a same-dialect call, passed
// through), and the gateway's promises on Messages: records, SDK retries, Idempotency-Key, resumed streams, usage.

/** What Claude Code and `@ai-sdk/anthropic` send: the key in x-api-key, and the API version. */
const CLAUDE_HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const MESSAGES = '/v1/messages'

/** A gateway with one Claude model on a mock Anthropic upstream, mounted on node:http. */
interface ClaudeFixture {
  url: string
  mock: MockUpstream
  usage: UsageEvent[]
  close(): Promise<void>
}

/**
 * `pinVersion` (default true) configures the upstream with `anthropic-version: 2023-06-01`, so that the tests of
 * everything else do not depend on the gateway forwarding the client's version; `gateway` overrides options.
 */
async function startClaudeFixture(options: { gateway?: Partial<GatewayOptions>; pinVersion?: boolean } = {}): Promise<ClaudeFixture> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const usage: UsageEvent[] = []
  const headers = options.pinVersion === false ? {} : { headers: { 'anthropic-version': '2023-06-01' } }
  const gateway = createGateway({
    upstreams: { claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY, ...headers } },
    models: [{ id: CLAUDE_MODEL, upstream: 'claude', created: 1760486400 }],
    auth: { apiKeys: [KEY_A] },
    logger: { warn() {}, error() {} },
    onUsage: (u) => usage.push(u),
    ...options.gateway,
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    mock,
    usage,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** A Messages body; `extra` adds top-level fields, `mock` among them (the SDK sends fields it does not know as given). */
const claudeBody = (text: string, extra: Record<string, unknown> = {}): Anthropic.MessageCreateParamsNonStreaming => ({
  model: CLAUDE_MODEL,
  max_tokens: 1024,
  messages: [{ role: 'user', content: text }],
  ...extra,
})

let fx: ClaudeFixture
beforeAll(async () => {
  fx = await startClaudeFixture()
})
afterAll(() => fx.close())

const sdk = (options: { timeout?: number; maxRetries?: number } = {}) =>
  new Anthropic({ baseURL: fx.url, apiKey: KEY_A, maxRetries: options.maxRetries ?? 0, timeout: options.timeout })
const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))
const WEATHER = {
  name: 'get_weather',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}

describe('@anthropic-ai/sdk through the gateway', () => {
  it('messages.create: the upstream’s message, the upstream called with the gateway’s key, never the client’s', async () => {
    const message = await sdk().messages.create(claudeBody('hello gateway'))
    expect(message).toMatchObject({ type: 'message', model: CLAUDE_MODEL, content: [{ type: 'text', text: 'Echo: hello gateway' }] })
    const [sent] = upstreamCalls('hello gateway')
    expect(sent).toMatchObject({ method: 'POST', path: MESSAGES })
    expect(sent!.headers['x-api-key']).toBe(UPSTREAM_KEY)
    expect(JSON.stringify(sent!.headers)).not.toContain(KEY_A)
    // Passed through: the upstream got the client's bytes.
    expect(JSON.parse(sent!.body)).toEqual(claudeBody('hello gateway'))
  })

  it('messages.stream(...).finalMessage(): the streamed message, as the SDK assembles it', async () => {
    const stream = sdk().messages.stream(claudeBody('stream through', { mock: { chunks: 4 } }))
    const deltas: string[] = []
    stream.on('text', (text) => deltas.push(text))
    const final = await stream.finalMessage()
    expect(deltas).toHaveLength(4)
    expect(final).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Echo: stream through' }] })
  })

  it('a tool round trip, streamed: tool_use, then the tool_result answered', async () => {
    const client = sdk()
    const ask = { ...claudeBody('weather through the gateway?'), tools: [WEATHER] }
    const asked = await client.messages.stream(ask).finalMessage()
    expect(asked.stop_reason).toBe('tool_use')
    const use = asked.content[0] as Anthropic.ToolUseBlock
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'text' } })
    const answered = await client.messages.create({
      ...ask,
      messages: [
        ...ask.messages,
        { role: 'assistant', content: asked.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
      ],
    })
    expect(answered.content).toEqual([{ type: 'text', text: 'Tool said: sunny' }])
  })

  it('messages.countTokens: the upstream’s count', async () => {
    const counted = await sdk().messages.countTokens({
      model: CLAUDE_MODEL,
      messages: [{ role: 'user', content: 'count through the gateway' }],
    })
    expect(counted).toEqual({ input_tokens: 7 })
    expect(fx.mock.requests.at(-1)!.path).toBe('/v1/messages/count_tokens')
  })

  it('models.list and models.retrieve: the gateway’s models in Anthropic’s shape, for a client that sends anthropic-version', async () => {
    const ids: string[] = []
    for await (const model of sdk().models.list()) ids.push(model.id)
    expect(ids).toEqual([CLAUDE_MODEL])
    const one = await sdk().models.retrieve(CLAUDE_MODEL)
    expect(one).toMatchObject({ type: 'model', id: CLAUDE_MODEL, display_name: expect.any(String), created_at: '2025-10-15T00:00:00.000Z' })
  })

  it('an unknown model is a NotFoundError in Anthropic’s shape, and nothing goes upstream', async () => {
    const before = fx.mock.requests.length
    const error = await sdk()
      .messages.create({ ...claudeBody('no such model'), model: 'claude-nope' })
      .catch((e) => e)
    expect(error).toBeInstanceOf(Anthropic.NotFoundError)
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: expect.any(String) } })
    expect(fx.mock.requests.length).toBe(before)
  })

  it('the gateway’s own errors carry its request id where the SDK reads it: the request-id header and the body', async () => {
    const wrong = await new Anthropic({ baseURL: fx.url, apiKey: 'sk-not-a-client', maxRetries: 0 }).messages
      .create(claudeBody('wrong key'))
      .catch((e) => e)
    expect(wrong).toBeInstanceOf(Anthropic.AuthenticationError)
    const requestId = wrong.headers.get('x-request-id')
    expect(requestId).toEqual(expect.any(String))
    expect(wrong.requestID).toBe(requestId)
    expect(wrong.error).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.any(String) },
      request_id: requestId,
    })
  })

  it('an upstream stream that breaks off ends in an error event the SDK reads: an APIError, not a silent end', async () => {
    const stream = sdk().messages.stream(claudeBody('break my stream', { mock: { chunks: 6, destroy_after_frames: 4 } }))
    const error = await stream.finalMessage().catch((e) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.any(String) } })
  })

  it('a plain Anthropic upstream gets the client’s anthropic-version and anthropic-beta, unchanged', async () => {
    const plain = await startClaudeFixture({ pinVersion: false })
    try {
      const headers = { ...CLAUDE_HEADERS, 'anthropic-beta': 'interleaved-thinking-2025-05-14' }
      const res = await call(`${plain.url}${MESSAGES}`, { headers, body: claudeBody('forward my version') })
      const [sent] = plain.mock.requests
      expect(sent!.headers['anthropic-version']).toBe('2023-06-01')
      expect(sent!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
      expect(res.status).toBe(200)
    } finally {
      await plain.close()
    }
  })
})

describe('Claude Code’s calls through the gateway', () => {
  it('a streamed call as Claude Code sends it (?beta=true, betas, thinking, tools) is relayed byte for byte', async () => {
    const headers = {
      ...CLAUDE_HEADERS,
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
      'anthropic-dangerous-direct-browser-access': 'true',
      'x-stainless-retry-count': '0',
      'x-app': 'cli',
    }
    const body = {
      ...claudeBody('run the command'),
      max_tokens: 32000,
      system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
      tools: [{ ...WEATHER, name: 'Bash' }],
      metadata: { user_id: 'session-1' },
      thinking: { type: 'enabled', budget_tokens: 31999 },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      stream: true,
    }
    const res = await call(`${fx.url}${MESSAGES}?beta=true`, { headers, body })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    const [sent] = upstreamCalls('run the command')
    expect(res.text).toBe(sent!.response)
    expect(res.text).toContain('"type":"signature_delta"')
    expect(res.text).toContain('"name":"Bash"')
  })
})

describe('the other Anthropic clients through the gateway', () => {
  it('LangChain ChatAnthropic: invoke and stream', async () => {
    const chat = langchainClaude({ base: fx.url, apiKey: KEY_A })
    expect(langchainText((await chat.invoke('langchain through')).content)).toBe('Echo: langchain through')
    let streamed = ''
    for await (const chunk of await chat.stream('langchain streamed')) streamed += langchainText(chunk.content)
    expect(streamed).toBe('Echo: langchain streamed')
  })

  it.each(VERCEL_ANTHROPIC_LEGS)('$name: generateText and streamText', async (leg) => {
    const target = { base: fx.url, apiKey: KEY_A }
    expect(await leg.generate(target, `vercel ${leg.name}`)).toMatchObject({ text: `Echo: vercel ${leg.name}`, finishReason: 'stop' })
    expect(await leg.stream(target, `vercel ${leg.name}`)).toMatchObject({ text: `Echo: vercel ${leg.name}`, finishReason: 'stop' })
  })
})

describe('recoveries of Messages calls', () => {
  it('keeps an interrupted whole call: listed, found by its body, its body_raw an Anthropic message', async () => {
    const body = claudeBody('recover my message', { mock: { delay_ms: 200 } })
    await sendThenAbort(`${fx.url}${MESSAGES}`, { headers: CLAUDE_HEADERS, body: JSON.stringify(body), afterMs: 30 })
    const listed = await eventually(async () => {
      const list = await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
      return list.json.items?.find((item: { request_body_hash: string }) => item.request_body_hash === requestBodyHash(body))
    })
    const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body })
    expect(lookup.json).toEqual({ items: [listed] })
    const detail = await call(`${fx.url}/v1/recoveries/${listed.request_id}`, { headers: bearer(KEY_A) })
    expect(detail.json.request.endpoint).toBe('messages')
    const message = JSON.parse(detail.json.response.body_raw)
    expect(message).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Echo: recover my message' }] })
  })

  it('an SDK timing out and retrying gets the answer from one upstream call, billed once', async () => {
    const before = fx.usage.length
    const message = await sdk({ timeout: 1000, maxRetries: 2 }).messages.create(
      claudeBody('sdk retry claude', { mock: { delay_ms: 2500 } }),
    )
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: sdk retry claude' }])
    // The SDK made several attempts (x-stainless-retry-count 0, 1, …); the gateway made one upstream call.
    expect(upstreamCalls('sdk retry claude')).toHaveLength(1)
    await eventually(() => fx.usage.length > before)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(fx.usage.slice(before)).toHaveLength(1)
  })

  it('a raw retry (x-stainless-retry-count: 1) joins the same call still running: same answer and request id', async () => {
    const body = claudeBody('retry joins claude', { mock: { delay_ms: 300 } })
    const attempt = (count: number) =>
      call(`${fx.url}${MESSAGES}`, { headers: { ...CLAUDE_HEADERS, 'x-stainless-retry-count': String(count) }, body })
    const first = attempt(0)
    await eventually(() => upstreamCalls('retry joins claude').length === 1)
    const [a, b] = await Promise.all([first, attempt(1)])
    expect(b.text).toBe(a.text)
    expect(b.headers['x-request-id']).toBe(a.headers['x-request-id'])
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('retry joins claude')).toHaveLength(1)
  })

  it('Idempotency-Key: a repeat is replayed from the kept answer, one upstream call', async () => {
    const options = { headers: { 'Idempotency-Key': 'claude-key-1' } }
    const first = await sdk().messages.create(claudeBody('idempotent claude'), options).withResponse()
    const second = await sdk().messages.create(claudeBody('idempotent claude'), options).withResponse()
    expect(second.data).toEqual(first.data)
    expect(second.response.headers.get('idempotent-replayed')).toBe('true')
    expect(second.response.headers.get('x-request-id')).toBe(first.response.headers.get('x-request-id'))
    expect(upstreamCalls('idempotent claude')).toHaveLength(1)
  })
})

describe('streams that survive, on Messages', () => {
  let sfx: ClaudeFixture
  beforeAll(async () => {
    sfx = await startClaudeFixture({ gateway: { recovery: { streams: 'finish' } } })
  })
  afterAll(() => sfx.close())

  /** A stream cut after 3 events, and its record once the call ended. */
  async function cutStream(text: string) {
    const body = claudeBody(text, { stream: true, mock: { chunks: 8, chunk_delay_ms: 40 } })
    const cut = await cutAfterEvents(`${sfx.url}${MESSAGES}`, CLAUDE_HEADERS, body, 3)
    expect(cut.status).toBe(200)
    const record = await eventually(async () => {
      const res = await call(`${sfx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? res.json : undefined
    })
    return { cut, record }
  }

  it('a cut stream runs to its end; resumed after event 3, the two parts make the whole stream, ids inside named events', async () => {
    const { cut, record } = await cutStream('resume my stream')
    // The Anthropic SDK reads only events with an event: line, so each number sits inside its named event.
    expect(sseEvents(cut.received)).toHaveLength(3)
    sseEvents(cut.received).forEach((event, i) => {
      expect(event).toMatch(new RegExp(`^id: ${i + 1}\nevent: \\w+\ndata: `))
    })
    const rest = await call(`${sfx.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...bearer(KEY_A), 'last-event-id': '3' } })
    expect(rest.status).toBe(200)
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    expect(rest.text).toMatch(/\nevent: message_stop\ndata: /)
  })

  it('a resume by an Anthropic client is answered in its conventions: x-api-key, request-id, Anthropic-shaped errors', async () => {
    const { cut, record } = await cutStream('resume in my dialect')
    const resume = (headers: Record<string, string>, id = cut.requestId) =>
      call(`${sfx.url}/v1/recoveries/${id}/stream`, { headers: { ...CLAUDE_HEADERS, ...headers } })
    const rest = await resume({ 'last-event-id': '3' })
    expect(rest.status).toBe(200)
    expect(rest.headers['request-id']).toBe(rest.headers['x-request-id'])
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    const bad = await resume({ 'last-event-id': 'three' })
    expect(bad.status).toBe(400)
    expect(bad.json).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('event number') },
      request_id: bad.headers['request-id'],
    })
    const wrongKey = await resume({ 'x-api-key': 'sk-not-a-key' })
    expect(wrongKey.status).toBe(401)
    expect(wrongKey.json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
  })

  it('a stream finished after its client left is kept assembled: body_raw is the message a whole call gives', async () => {
    const { record } = await cutStream('assemble my stream')
    const whole = await call(`${fx.url}${MESSAGES}`, { headers: CLAUDE_HEADERS, body: claudeBody('assemble my stream') })
    const { id: _id, ...message } = whole.json
    expect(JSON.parse(record.response.body_raw)).toMatchObject(message)
  })
})

describe('usage events of Messages calls', () => {
  const usage = { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 30, output_tokens: 7 }

  it.each([false, true])('count input with the cache tokens (stream: %s), once per call', async (stream) => {
    const before = fx.usage.length
    const marker = `usage claude ${stream}`
    const res = await call(`${fx.url}${MESSAGES}`, { headers: CLAUDE_HEADERS, body: claudeBody(marker, { stream, mock: { usage } }) })
    expect(res.status).toBe(200)
    const event = await eventually(() => fx.usage.slice(before).find((u) => u.requestId === res.headers['x-request-id']))
    expect(event).toMatchObject({
      model: CLAUDE_MODEL,
      endpoint: 'messages',
      input_tokens: 60,
      output_tokens: 7,
      total_tokens: 67,
      recovered: false,
      upstream: 'claude',
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(fx.usage.slice(before)).toHaveLength(1)
  })
})
