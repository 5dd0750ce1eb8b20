import Anthropic from '@anthropic-ai/sdk'
import { Stream } from '@anthropic-ai/sdk/core/streaming'
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions, UsageEvent } from '../../src/types.js'
import { CLAUDE_MODEL } from '../support/anthropic-sdks.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'
import { startKeyGate } from '../support/key-gate.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents, sseEvents } from '../support/sse-client.js'

// The gateway's promises on Messages beyond a single call: key pools on an Anthropic upstream, fallbacks from a Claude
// model to models of the other formats, usage events of streams, and a cancel through the Recoveries API, each seen
// through the Anthropic SDK and what the upstreams recorded.

/** What a test started for itself, closed after it, newest first. */
const opened: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close()
})

/** A gateway with these upstreams and models on node:http; its warn and error lines and usage events collected. */
async function startGateway(options: Pick<GatewayOptions, 'upstreams' | 'models'> & Partial<GatewayOptions>) {
  const { gateway, logs, usage } = collectingGateway(options)
  const server: MountedServer = await NODE_KINDS[0]!.mount(gateway)
  const sdk = new Anthropic({ baseURL: server.url, apiKey: KEY_A, maxRetries: 0 })
  return { gateway, server, logs, usage, sdk, close: () => server.close().then(() => gateway.close()) }
}

/** What a resumer of a cancelled stream is told, in the error event that ends it. */
const CANCELLED = 'The call was cancelled through the Recoveries API.'

/** A Messages request of one user turn. */
const ask = (model: string, text: string) => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: text }] })

describe('key pools on an Anthropic upstream', () => {
  /** The mock (taking any key, recording each request's), the gate in front of it, and a gateway with `apiKeys`. */
  async function pooled(apiKeys: NonNullable<GatewayOptions['upstreams'][string]['apiKeys']>) {
    const mock = await startMockUpstream()
    const gate = await startKeyGate(mock)
    opened.push(mock, gate)
    const gw = await startGateway({
      upstreams: { claude: { type: 'anthropic', baseUrl: gate.url, apiKeys } },
      models: [{ id: CLAUDE_MODEL, upstream: 'claude' }],
    })
    opened.push(gw)
    const keysSeen = () => mock.requests.map((r) => r.headers['x-api-key'])
    return { mock, gate, gw, keysSeen }
  }
  /** The usage events of calls with these request ids, in the calls' order, once they all came. */
  const usageOf = (usage: UsageEvent[], ids: string[]) =>
    eventually(() => {
      const events = ids.map((id) => usage.find((u) => u.requestId === id))
      return events.every((e) => e !== undefined) ? (events as UsageEvent[]) : undefined
    })

  it('spreads calls over the keys in turn, one key in x-api-key each, never the client’s; usage names each key', async () => {
    const keys = ['sk-ant-pool-one-1111', 'sk-ant-pool-two-2222', 'sk-ant-pool-three-3333']
    const { mock, gw, keysSeen } = await pooled([keys[0]!, { key: keys[1]!, alias: 'two' }, keys[2]!])
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const { data, request_id } = await gw.sdk.messages.create(ask(CLAUDE_MODEL, `pool ${i}`)).withResponse()
      expect(data.content).toEqual([{ type: 'text', text: `Echo: pool ${i}` }])
      ids.push(request_id!)
    }
    expect(keysSeen()).toEqual([...keys, ...keys])
    for (const request of mock.requests) {
      expect(request.headers.authorization).toBeUndefined()
      expect(JSON.stringify(request.headers)).not.toContain(KEY_A)
    }
    const events = await usageOf(gw.usage, ids)
    expect(events.map((u) => u.keyAlias)).toEqual(['key-1', 'two', 'key-3', 'key-1', 'two', 'key-3'])
    expect(events.map((u) => u.upstream)).toEqual(Array(6).fill('claude'))
  })

  it('rests a key answered 401 and moves the call to the next: every call answered, whole or streamed', async () => {
    const { gate, gw, keysSeen } = await pooled([{ key: 'sk-ant-revoked-0000', alias: 'old' }, 'sk-ant-live-1111'])
    gate.refusals.set('sk-ant-revoked-0000', { status: 401 })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const { data, request_id } = await gw.sdk.messages.create(ask(CLAUDE_MODEL, `revoked ${i}`)).withResponse()
      expect(data.content).toEqual([{ type: 'text', text: `Echo: revoked ${i}` }])
      ids.push(request_id!)
    }
    const streamed = await gw.sdk.messages.stream(ask(CLAUDE_MODEL, 'revoked streamed')).finalMessage()
    expect(streamed.content).toEqual([{ type: 'text', text: 'Echo: revoked streamed' }])
    // Tried once, on the first call; resting since, so the live key took that call and every later one.
    expect(gate.refused).toEqual(['sk-ant-revoked-0000'])
    expect(keysSeen()).toEqual(Array(4).fill('sk-ant-live-1111'))
    expect((await usageOf(gw.usage, ids)).map((u) => u.keyAlias)).toEqual(['key-2', 'key-2', 'key-2'])
    const line = gw.logs.find((l) => l.message === 'model-gateway: upstream attempt failed')
    expect(line?.meta).toMatchObject({ upstream: 'claude', key: 'old', status: 401, attempt: expect.any(Number) })
    expect(JSON.stringify(gw.logs)).not.toMatch(/sk-ant-|revoked \d|revoked streamed/)
  })

  it('moves a 429 to the next key; when every key is limited the SDK gets the last 429, its retry-after, the gateway’s request id', async () => {
    const { gate, gw, keysSeen } = await pooled(['sk-ant-limited-aaaa', 'sk-ant-spare-bbbb'])
    gate.refusals.set('sk-ant-limited-aaaa', { status: 429, headers: { 'retry-after': '7' } })
    for (let i = 0; i < 3; i++) expect((await gw.sdk.messages.create(ask(CLAUDE_MODEL, `limited ${i}`))).type).toBe('message')
    expect(gate.refused).toEqual(['sk-ant-limited-aaaa'])
    expect(keysSeen()).toEqual(Array(3).fill('sk-ant-spare-bbbb'))
    gate.refusals.set('sk-ant-spare-bbbb', { status: 429, headers: { 'retry-after': '7' } })
    const error = await gw.sdk.messages.create(ask(CLAUDE_MODEL, 'all limited')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    const limited = error as InstanceType<typeof Anthropic.RateLimitError>
    expect(limited.type).toBe('rate_limit_error')
    expect(limited.headers?.get('retry-after')).toBe('7')
    expect(limited.requestID).toMatch(/^[0-9A-Z]{26}$/)
    // The spare key first (the limited one rests), then the limited one anyway: nothing else was left to try.
    expect(gate.refused).toEqual(['sk-ant-limited-aaaa', 'sk-ant-spare-bbbb', 'sk-ant-limited-aaaa'])
  })

  it('every key refused (401, 403): the SDK gets a 502 api_error in Anthropic’s shape, the operator an error line', async () => {
    const { gate, gw } = await pooled(['sk-ant-revoked-1111', 'sk-ant-forbidden-2222'])
    gate.refusals.set('sk-ant-revoked-1111', { status: 401 }).set('sk-ant-forbidden-2222', { status: 403 })
    const error = await gw.sdk.messages.create(ask(CLAUDE_MODEL, 'no key works')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.InternalServerError)
    const failed = error as InstanceType<typeof Anthropic.InternalServerError>
    expect([failed.status, failed.error]).toEqual([
      502,
      { type: 'error', error: { type: 'api_error', message: expect.any(String) }, request_id: failed.requestID },
    ])
    const line = gw.logs.find((l) => l.message === "model-gateway: the upstream refused the gateway's credentials")
    expect(line?.meta).toMatchObject({ requestId: failed.requestID, upstream: 'claude', status: 403 })
    expect(JSON.stringify(gw.logs)).not.toMatch(/sk-ant-|no key works/)
  })
})

/** How a Claude primary fails before it could bill (529: Anthropic overloaded; each status with a retry-after), and the fallbacks. */
const FAILURES = ['503', '529', '429', 'refused'] as const
const TARGETS = [
  {
    name: 'an OpenAI model',
    model: 'gpt-spare',
    upstream: 'openai-backup',
    answers: 'gpt-4o-mini',
    whole: '/v1/chat/completions',
    streamed: '/v1/chat/completions',
    body: (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], max_completion_tokens: 64 }),
  },
  {
    name: 'a Gemini model',
    model: 'gemini-spare',
    upstream: 'gemini-backup',
    answers: 'gemini-2.5-flash',
    whole: '/v1beta/models/gemini-2.5-flash:generateContent',
    streamed: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    body: (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 64 } }),
  },
] as const

describe('a Claude model whose upstream fails before billing falls back to a model of another format', () => {
  let primary: MockUpstream
  let backup: MockUpstream
  let gw: Awaited<ReturnType<typeof startGateway>>
  beforeAll(async () => {
    primary = await startMockUpstream({ apiKey: UPSTREAM_KEY })
    backup = await startMockUpstream({ apiKey: UPSTREAM_KEY })
    const refused = `http://127.0.0.1:${await freePort()}`
    // Circuits that never open: every call tries its primary, so the mocks' records say what each call did.
    const circuit = { failures: 1000 }
    gw = await startGateway({
      upstreams: {
        'claude-primary': { type: 'anthropic', baseUrl: primary.url, apiKey: UPSTREAM_KEY, circuit },
        'claude-refused': { type: 'anthropic', baseUrl: refused, apiKey: UPSTREAM_KEY, circuit },
        'openai-backup': { type: 'openai', baseUrl: `${backup.url}/v1`, apiKey: UPSTREAM_KEY },
        'gemini-backup': { type: 'gemini', baseUrl: backup.url, apiKey: UPSTREAM_KEY },
      },
      models: [
        ...TARGETS.flatMap(({ model }) => [
          { id: `claude-up-to-${model}`, upstream: 'claude-primary', fallbacks: [model] },
          { id: `claude-down-to-${model}`, upstream: 'claude-refused', fallbacks: [model] },
        ]),
        ...TARGETS.map(({ model, upstream, answers }) => ({ id: model, upstream, upstreamModel: answers })),
      ],
    })
  })
  afterAll(async () => {
    await gw.close()
    await primary.close()
    await backup.close()
  })

  /** The requests a mock got whose body carries `marker`: their paths and parsed bodies. */
  const got = (mock: MockUpstream, marker: string) =>
    mock.requests.filter((r) => r.body.includes(marker)).map((r) => ({ path: r.path, body: JSON.parse(r.body) }))
  /** The model a case calls, its primary made to fail as `failure` says for requests carrying `marker`. */
  const failing = (failure: (typeof FAILURES)[number], target: (typeof TARGETS)[number], marker: string) => {
    primary.steer(marker, failure === 'refused' ? undefined : { status: Number(failure), headers: { 'retry-after': '2' } })
    return failure === 'refused' ? `claude-down-to-${target.model}` : `claude-up-to-${target.model}`
  }

  for (const target of TARGETS) {
    describe(`to ${target.name}`, () => {
      it.each(FAILURES)('primary %s: messages.create gets an Anthropic message with the fallback’s answer', async (failure) => {
        const marker = `whole ${failure} to ${target.model}`
        const model = failing(failure, target, marker)
        const { data, request_id } = await gw.sdk.messages.create(ask(model, marker)).withResponse()
        // The answer names the model that gave it, as every answer of a renamed model does.
        expect(data).toMatchObject({
          type: 'message',
          role: 'assistant',
          model: target.answers,
          stop_reason: 'end_turn',
          stop_sequence: null,
        })
        expect(data.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
        expect(data.usage.input_tokens).toBeGreaterThan(0)
        expect(data.usage.output_tokens).toBeGreaterThan(0)
        // The primary that may have billed was called once at most; the fallback once, translated.
        expect(got(primary, marker).map((r) => r.path)).toEqual(failure === 'refused' ? [] : ['/v1/messages'])
        expect(got(backup, marker)).toEqual([{ path: target.whole, body: target.body(marker) }])
        const event = await eventually(() => gw.usage.find((u) => u.requestId === request_id))
        expect(event).toMatchObject({ model, endpoint: 'messages', upstream: target.upstream })
        // The failed attempt is a warn line naming the primary and how it failed, never the prompt.
        const line = gw.logs.find((l) => l.meta?.requestId === request_id)
        expect(line).toMatchObject({
          message: 'model-gateway: upstream attempt failed',
          meta:
            failure === 'refused'
              ? { upstream: 'claude-refused', code: 'upstream_unreachable' }
              : { upstream: 'claude-primary', status: Number(failure) },
        })
        expect(JSON.stringify(gw.logs)).not.toContain(marker)
      })

      it.each(FAILURES)('primary %s: messages.stream().finalMessage() assembles the fallback’s stream', async (failure) => {
        const marker = `stream ${failure} to ${target.model}`
        const model = failing(failure, target, marker)
        backup.steer(marker, { chunks: 4 })
        const stream = gw.sdk.messages.stream(ask(model, marker))
        const deltas: string[] = []
        stream.on('text', (text) => deltas.push(text))
        const message = await stream.finalMessage()
        expect(deltas.length).toBeGreaterThan(1)
        expect(deltas.join('')).toBe(`Echo: ${marker}`)
        expect(message).toMatchObject({ type: 'message', role: 'assistant', model: target.answers, stop_reason: 'end_turn' })
        expect(message.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
        expect(message.usage.output_tokens).toBeGreaterThan(0)
        expect(got(primary, marker).map((r) => r.path)).toEqual(failure === 'refused' ? [] : ['/v1/messages'])
        expect(got(backup, marker).map((r) => r.path)).toEqual([target.streamed])
      })
    })
  }
})

describe('usage events and cancels of Messages streams', () => {
  /** Every count of a prompt partly read from the cache and partly written to it, and of a long answer. */
  const USAGE = { input_tokens: 900, cache_creation_input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 25_000 }
  const HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
  let mock: MockUpstream
  let scripted: ScriptedUpstream
  let gw: Awaited<ReturnType<typeof startGateway>>
  beforeAll(async () => {
    mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
    scripted = await startScriptedUpstream()
    gw = await startGateway({
      upstreams: {
        claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
        scripted: { type: 'anthropic', baseUrl: scripted.url, apiKey: UPSTREAM_KEY },
        gpt: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
        gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      },
      models: [
        { id: CLAUDE_MODEL, upstream: 'claude' },
        { id: 'claude-scripted', upstream: 'scripted' },
        { id: 'gpt-4o-mini', upstream: 'gpt' },
        { id: 'gemini-2.5-flash', upstream: 'gem' },
      ],
      // Plain streams stop with their client: only the Idempotency-Key makes the cancelled one resumable.
      recovery: { streams: 'cancel' },
    })
  })
  afterAll(async () => {
    await gw.close()
    await mock.close()
    await scripted.close()
  })
  const usageOf = (requestId: string | null | undefined) => eventually(() => gw.usage.find((u) => u.requestId === requestId))

  it.each([
    ['Gemini', 'gemini-2.5-flash', 'gem', { promptTokenCount: 100, candidatesTokenCount: 7, thoughtsTokenCount: 50, totalTokenCount: 157 }],
    ['OpenAI', 'gpt-4o-mini', 'gpt', { prompt_tokens: 100, completion_tokens: 57, total_tokens: 157 }],
  ])(
    'a Messages stream translated from %s: counted from the upstream’s final events, and told to the client',
    async (_, model, upstream, usage) => {
      const marker = `usage of a stream from ${model}`
      mock.steer(marker, { usage, chunks: 4 })
      const stream = gw.sdk.messages.stream(ask(model, marker))
      const message = await stream.finalMessage()
      expect(message.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
      expect(message.usage).toMatchObject({ input_tokens: 100, output_tokens: 57 })
      // Gemini reports its thoughts apart: they are part of the output, and said so.
      const reasoning = upstream === 'gem' ? 50 : 0
      const counted = {
        input_tokens: 100,
        output_tokens: 57,
        total_tokens: 157,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: reasoning,
      }
      expect(await usageOf(stream.request_id)).toMatchObject({ ...counted, model, endpoint: 'messages', recovered: false, upstream })
    },
  )

  /** The events the mock streams for `controls`, its `message_delta` cut down to the output count, as Anthropic documents it. */
  async function outputOnlyDelta(controls: Record<string, unknown>): Promise<string[]> {
    const body = { ...ask(CLAUDE_MODEL, 'stream of the script'), stream: true, mock: controls }
    const res = await call(`${mock.url}/v1/messages`, { headers: { 'x-api-key': UPSTREAM_KEY, 'anthropic-version': '2023-06-01' }, body })
    return sseEvents(res.text).map((event) => {
      if (!event.startsWith('event: message_delta\n')) return event
      const data = JSON.parse(event.slice(event.indexOf('data: ') + 6))
      return `event: message_delta\ndata: ${JSON.stringify({ ...data, usage: { output_tokens: data.usage.output_tokens } })}\n\n`
    })
  }

  it.each([
    ['a short stream', { chunks: 3 }, 0],
    ['a stream of over 64 KiB of deltas', { content_bytes: 100_000, chunks: 50 }, 64 * 1024],
  ])('passed through, input only in message_start and output only in message_delta: %s', async (_, controls, deltaBytes) => {
    const events = await outputOnlyDelta({ usage: USAGE, ...controls })
    expect(events.filter((e) => e.startsWith('event: content_block_delta\n')).join('').length).toBeGreaterThan(deltaBytes)
    expect(events[0]).toContain('"input_tokens":900,"cache_creation_input_tokens":40,"cache_read_input_tokens":60')
    expect(events.at(-2)).toMatch(/"usage":\{"output_tokens":25000\}\}\n\n$/)
    scripted.script(events.map((event) => Buffer.from(event)))
    const res = await call(`${gw.server.url}/v1/messages`, { headers: HEADERS, body: { ...ask('claude-scripted', 'x'), stream: true } })
    expect(res.text).toBe(events.join(''))
    // 900 read afresh, 40 written to the cache and 60 read from it, from message_start; 25 000 out, from message_delta.
    const counted = {
      input_tokens: 1000,
      output_tokens: 25_000,
      total_tokens: 26_000,
      cached_input_tokens: 60,
      cache_write_tokens: 40,
      reasoning_tokens: 0,
    }
    const event = await usageOf(res.headers['x-request-id'] as string)
    expect(event).toMatchObject({ ...counted, model: 'claude-scripted', endpoint: 'messages', upstream: 'scripted', keyAlias: 'key-1' })
  })

  it('a long stream whose message_delta repeats the input counts: read once, never added', async () => {
    const controls = { usage: USAGE, content_bytes: 100_000, chunks: 50 }
    const res = await call(`${gw.server.url}/v1/messages`, {
      headers: HEADERS,
      body: { ...ask(CLAUDE_MODEL, 'x'), stream: true, mock: controls },
    })
    expect(res.text.length).toBeGreaterThan(100_000)
    expect(sseEvents(res.text).at(-2)).toContain('"usage":{"input_tokens":900,')
    expect(await usageOf(res.headers['x-request-id'] as string)).toMatchObject({ input_tokens: 1000, output_tokens: 25_000 })
  })

  it('a keyed stream cancelled through the Recoveries API: the upstream call stops, what came is kept, a resume ends in the SDK’s error', async () => {
    const marker = 'cancel my message'
    const aborted = mock.abortedStreams
    const body = { ...ask(CLAUDE_MODEL, marker), stream: true, mock: { content_bytes: 2000, chunks: 40, chunk_delay_ms: 50 } }
    const cut = await cutAfterEvents(`${gw.server.url}/v1/messages`, { ...HEADERS, 'idempotency-key': 'cancel-messages-1' }, body, 4)
    const cancel = await call(`${gw.server.url}/v1/recoveries/${cut.requestId}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
    expect(cancel.json).toEqual({ request_id: cut.requestId, cancelled: true, reason: 'cancelled' })
    // The mock saw its request end before its stream did.
    await mock.waitFor(() => mock.abortedStreams > aborted)
    expect(mock.requests.find((r) => r.body.includes(marker))?.response).not.toContain('message_stop')
    const record = await eventually(async () => {
      const res = await call(`${gw.server.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? res.json : undefined
    })
    expect(record.interrupted_reason).toBe('cancelled')
    const raw: string = record.response.stream_raw
    expect(raw.startsWith(cut.received)).toBe(true)
    const events = sseEvents(raw)
    const ending = { type: 'error', error: { type: 'invalid_request_error', message: CANCELLED }, request_id: cut.requestId }
    expect(events.at(-1)).toBe(`id: ${events.length}\nevent: error\ndata: ${JSON.stringify(ending)}\n\n`)
    // What came is kept: the message its text deltas make, cut short.
    const came = [...raw.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('')
    const kept = JSON.parse(record.response.body_raw)
    expect(kept).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: came }] })
    expect(came.length).toBeGreaterThan(0)
    expect(came.length).toBeLessThan(2000)
    // A resume after the fourth event: the rest of what came, then the error event, which the SDK raises.
    const resumed = await fetch(`${gw.server.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { ...bearer(KEY_A), 'last-event-id': '4' },
    })
    const seen: string[] = []
    const read = async () => {
      for await (const event of Stream.fromSSEResponse<RawMessageStreamEvent>(resumed, new AbortController())) seen.push(event.type)
    }
    const error = await read().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    const raised = error as InstanceType<typeof Anthropic.APIError>
    expect(raised.type).toBe('invalid_request_error')
    expect(raised.apiMessage).toBe(CANCELLED)
    expect(raised.error).toEqual(ending)
    expect(seen).toEqual(events.slice(4, -1).map((event) => /\nevent: (\w+)\n/.exec(event)?.[1]))
  })
})
