import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { UsageEvent } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import { OPENAI_SDKS } from '../support/sdks.js'
import { serve } from '../support/servers.js'

// Fallbacks of the other format: the primary's mock fails (503, 429) or its port refuses connections; the fallback,
// on a second mock, speaks the other format. Each mock counts what it got, by a marker in the prompt.

/** The part of the Google GenAI client these tests use. */
interface GenAI {
  models: {
    generateContent(params: { model: string; contents: string }): Promise<{ text?: string; modelVersion?: string }>
    generateContentStream(params: { model: string; contents: string }): Promise<AsyncIterable<{ text?: string }>>
  }
}

let primary: MockUpstream
let backup: MockUpstream
let gateway: Gateway
let server: MountedServer
const usage: UsageEvent[] = []
const logs: Array<{ message: string; meta?: Record<string, unknown> }> = []

beforeAll(async () => {
  primary = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  backup = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const refused = `http://127.0.0.1:${await freePort()}`
  // Circuits that never open: every test's primary is tried, so the mock's counts say what each call did.
  const circuit = { failures: 1000 }
  gateway = createGateway({
    upstreams: {
      'openai-primary': { type: 'openai', baseUrl: `${primary.url}/v1`, apiKey: UPSTREAM_KEY, circuit },
      'openai-refused': { type: 'openai', baseUrl: `${refused}/v1`, apiKey: UPSTREAM_KEY, circuit },
      'gemini-primary': { type: 'gemini', baseUrl: primary.url, apiKey: UPSTREAM_KEY, circuit },
      'gemini-backup': { type: 'gemini', baseUrl: backup.url, apiKey: UPSTREAM_KEY },
      'openai-backup': { type: 'openai', baseUrl: `${backup.url}/v1`, apiKey: UPSTREAM_KEY },
      'claude-backup': { type: 'anthropic', baseUrl: backup.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt-main', upstream: 'openai-primary', fallbacks: ['gemini-spare', 'gpt-spare'] },
      { id: 'gpt-down', upstream: 'openai-refused', fallbacks: ['gemini-spare'] },
      { id: 'gemini-main', upstream: 'gemini-primary', fallbacks: ['gpt-spare'] },
      { id: 'gemini-spare', upstream: 'gemini-backup', upstreamModel: 'gemini-2.5-flash' },
      { id: 'gpt-spare', upstream: 'openai-backup', upstreamModel: 'gpt-4o-mini' },
      { id: 'gpt-to-claude', upstream: 'openai-primary', fallbacks: ['claude-spare'] },
      { id: 'gpt-down-to-claude', upstream: 'openai-refused', fallbacks: ['claude-spare'] },
      { id: 'claude-spare', upstream: 'claude-backup', upstreamModel: 'claude-haiku-4-5' },
    ],
    auth: { apiKeys: [KEY_A] },
    onUsage: (u) => usage.push(u),
    logger: { warn: (message, meta) => logs.push({ message, meta }), error: (message, meta) => logs.push({ message, meta }) },
  })
  server = await serve(nodeHandler(gateway))
})
afterAll(async () => {
  await server.close()
  await gateway.close()
  await primary.close()
  await backup.close()
})

/** The requests a mock got whose body carries `marker`: their paths and parsed bodies. */
const got = (mock: MockUpstream, marker: string) =>
  mock.requests.filter((r) => r.body.includes(marker)).map((r) => ({ path: r.path, body: JSON.parse(r.body), raw: r.body }))

/** Makes the primary mock fail every request carrying `marker` the way the test names; `refused` needs nothing. */
const failPrimary = (failure: string, marker: string) => {
  if (failure === '503') primary.steer(marker, { status: 503 })
  if (failure === '429') primary.steer(marker, { status: 429, headers: { 'retry-after': '3' } })
}

const FAILURES: Array<[string, string]> = [
  ['503', 'gpt-main'],
  ['429', 'gpt-main'],
  ['refused', 'gpt-down'],
]

describe.each(OPENAI_SDKS)('%s: a chat model falls back to a Gemini model', (sdk, load) => {
  const client = async () => new (await load())({ baseURL: `${server.url}/v1`, apiKey: KEY_A, maxRetries: 0 })

  it.each(FAILURES)('primary %s: the whole answer is Gemini’s, in chat-completions terms', async (failure, model) => {
    const marker = `whole ${failure} ${sdk}`
    failPrimary(failure, marker)
    const completion = await (await client()).chat.completions.create({ model, messages: [{ role: 'user', content: marker }] })
    expect(completion.object).toBe('chat.completion')
    expect(completion.choices[0]?.message.content).toBe(`Echo: ${marker}`)
    expect(completion.choices[0]?.finish_reason).toBe('stop')
    // The primary that may have billed was called once at most; the fallback once, on Gemini's route, translated.
    expect(got(primary, marker)).toHaveLength(failure === 'refused' ? 0 : 1)
    const [sent, ...more] = got(backup, marker)
    expect(more).toHaveLength(0)
    expect(sent?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    expect(sent?.body).toEqual({ contents: [{ role: 'user', parts: [{ text: marker }] }] })
    const event = await eventually(() => usage.find((u) => u.requestId === completion._request_id))
    expect(event).toMatchObject({ model, upstream: 'gemini-backup', endpoint: 'chat.completions' })
    expect(event.input_tokens).toBeGreaterThan(0)
  })

  it.each(FAILURES)('primary %s: the stream is Gemini’s, chunk by chunk in chat-completions terms', async (failure, model) => {
    const marker = `stream ${failure} ${sdk}`
    failPrimary(failure, marker)
    const stream = await (await client()).chat.completions.create({
      model,
      messages: [{ role: 'user', content: marker }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let total = 0
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk')
      text += chunk.choices[0]?.delta.content ?? ''
      total = chunk.usage?.total_tokens ?? total
    }
    expect(text).toBe(`Echo: ${marker}`)
    expect(total).toBeGreaterThan(0)
    expect(got(primary, marker)).toHaveLength(failure === 'refused' ? 0 : 1)
    expect(got(backup, marker).map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'])
  })
})

describe.each(OPENAI_SDKS)('%s: a chat model falls back to a Claude model', (sdk, load) => {
  const CLAUDE_FAILURES: Array<[string, string]> = [
    ['503', 'gpt-to-claude'],
    ['429', 'gpt-to-claude'],
    ['refused', 'gpt-down-to-claude'],
  ]

  it.each(CLAUDE_FAILURES)(
    'primary %s: a chat completion, whole and streamed, made of the Claude model’s message',
    async (failure, model) => {
      const marker = `claude fallback ${failure} ${sdk}`
      failPrimary(failure, marker)
      const client = new (await load())({ baseURL: `${server.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
      const { data: completion, request_id } = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: `${marker} whole` }] })
        .withResponse()
      expect(completion.object).toBe('chat.completion')
      expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: `Echo: ${marker} whole` })
      expect(completion.choices[0]?.finish_reason).toBe('stop')
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: `${marker} streamed` }],
        stream: true,
      })
      let text = ''
      let finish: string | null | undefined
      for await (const chunk of stream) {
        expect(chunk.object).toBe('chat.completion.chunk')
        text += chunk.choices[0]?.delta.content ?? ''
        finish = chunk.choices[0]?.finish_reason ?? finish
      }
      expect([text, finish]).toEqual([`Echo: ${marker} streamed`, 'stop'])
      expect(got(primary, marker)).toHaveLength(failure === 'refused' ? 0 : 2)
      // Messages wants an output limit the chat request did not set: the model's default. The key is the gateway's.
      expect(got(backup, marker).map((r) => [r.path, r.body.model, r.body.stream, r.body.max_tokens])).toEqual([
        ['/v1/messages', 'claude-haiku-4-5', undefined, 4096],
        ['/v1/messages', 'claude-haiku-4-5', true, 4096],
      ])
      const heads = backup.requests.filter((r) => r.body.includes(marker)).map((r) => r.headers)
      expect(heads.map((h) => [h['x-api-key'], h['anthropic-version'], h.authorization])).toEqual(
        Array(2).fill([UPSTREAM_KEY, '2023-06-01', undefined]),
      )
      const event = await eventually(() => usage.find((u) => u.requestId === request_id))
      expect(event).toMatchObject({ model, upstream: 'claude-backup', endpoint: 'chat.completions' })
    },
  )
})

describe('a Gemini client', () => {
  const genai = async () => {
    const { GoogleGenAI } = await import('@google/genai')
    return new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: server.url } }) as unknown as GenAI
  }

  it('on a Gemini model whose upstream answers 503 gets the OpenAI fallback’s answer in Gemini terms, whole and streamed', async () => {
    const marker = 'gemini client, openai fallback'
    failPrimary('503', marker)
    const client = await genai()
    const whole = await client.models.generateContent({ model: 'gemini-main', contents: `${marker} whole` })
    expect(whole.text).toBe(`Echo: ${marker} whole`)
    const chunks: string[] = []
    for await (const chunk of await client.models.generateContentStream({ model: 'gemini-main', contents: `${marker} streamed` })) {
      chunks.push(chunk.text ?? '')
    }
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.join('')).toBe(`Echo: ${marker} streamed`)
    expect(got(primary, marker).map((r) => r.path)).toEqual([
      '/v1beta/models/gemini-main:generateContent',
      '/v1beta/models/gemini-main:streamGenerateContent?alt=sse',
    ])
    const sent = got(backup, marker)
    expect(sent.map((r) => [r.path, r.body.model, r.body.stream])).toEqual([
      ['/v1/chat/completions', 'gpt-4o-mini', undefined],
      ['/v1/chat/completions', 'gpt-4o-mini', true],
    ])
  })

  it('on a translated OpenAI model gets a Gemini fallback’s answer passed through, its own bytes sent', async () => {
    const marker = 'gemini client, translated primary'
    failPrimary('503', marker)
    const sentBody = JSON.stringify(geminiBody(marker))
    const res = await call(`${server.url}/v1beta/models/gpt-main:generateContent`, {
      headers: { 'x-goog-api-key': KEY_A, 'content-type': 'application/json' },
      body: sentBody,
    })
    expect(res.status).toBe(200)
    expect(res.json.candidates[0].content.parts[0].text).toBe(`Echo: ${marker}`)
    // The primary got the request translated to chat; the Gemini fallback got the client's own bytes.
    expect(got(primary, marker).map((r) => [r.path, r.body.model])).toEqual([['/v1/chat/completions', 'gpt-main']])
    expect(got(backup, marker).map((r) => [r.path, r.raw])).toEqual([['/v1beta/models/gemini-2.5-flash:generateContent', sentBody]])
  })
})

describe('a field the fallback’s format cannot express', () => {
  const post = (model: string, marker: string) =>
    call(`${server.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: { ...chatBody(marker), model, logit_bias: { '50256': -100 } },
    })

  it('skips that fallback with a warn line naming the field, and the next one answers', async () => {
    const marker = 'logit bias, two fallbacks'
    failPrimary('503', marker)
    const res = await post('gpt-main', marker)
    expect(res.status).toBe(200)
    expect(res.json.choices[0].message.content).toBe(`Echo: ${marker}`)
    expect(got(primary, marker)).toHaveLength(1)
    expect(got(backup, marker).map((r) => r.path)).toEqual(['/v1/chat/completions'])
    const line = logs.find((l) => l.message.includes('fallback skipped') && l.meta?.requestId === res.headers['x-request-id'])
    expect(line?.meta).toMatchObject({ model: 'gemini-spare', upstream: 'gemini-backup', field: 'logit_bias' })
    expect(JSON.stringify(line)).not.toContain(marker)
  })

  it('skips a fallback of the other format for an embeddings call, which is never translated', async () => {
    const marker = 'embeddings after failover'
    failPrimary('503', marker)
    const res = await call(`${server.url}/v1/embeddings`, { headers: bearer(KEY_A), body: { model: 'gpt-main', input: marker } })
    expect(res.status).toBe(200)
    expect(res.json.object).toBe('list')
    expect(got(backup, marker).map((r) => [r.path, r.body.model])).toEqual([['/v1/embeddings', 'gpt-4o-mini']])
    const line = logs.find((l) => l.message.includes('fallback skipped') && l.meta?.requestId === res.headers['x-request-id'])
    expect(line?.meta).toMatchObject({ model: 'gemini-spare', field: 'model' })
  })

  it('gives the client the primary’s failure, not a 400, when no fallback is left', async () => {
    const marker = 'logit bias, refused primary'
    const res = await post('gpt-down', marker)
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_unreachable')
    expect(got(backup, marker)).toHaveLength(0)
  })
})

describe('records and repeats of a call a fallback of the other format answered', () => {
  /** The recovery record of the request sent as `body`, once it is kept. */
  const recordOf = async (body: string) => {
    const list = await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })
    for (const { request_id } of list.json.items as Array<{ request_id: string }>) {
      const detail = (await call(`${server.url}/v1/recoveries/${request_id}`, { headers: bearer(KEY_A) })).json
      if (detail.request.body_raw === body) return detail
    }
    return undefined
  }

  it('keeps the answer of a call whose client left, in the client’s terms', async () => {
    const marker = 'kept after failover'
    failPrimary('503', marker)
    backup.steer(marker, { delay_ms: 300 })
    const body = JSON.stringify({ ...chatBody(marker), model: 'gpt-main' })
    await sendThenAbort(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body, afterMs: 50 })
    const record = await eventually(() => recordOf(body))
    expect(record.request.body_raw).toBe(body)
    const answer = JSON.parse(record.response.body_raw)
    expect(answer.object).toBe('chat.completion')
    expect(answer.choices[0].message.content).toBe(`Echo: ${marker}`)
    expect([got(primary, marker).length, got(backup, marker).length]).toEqual([1, 1])
  })

  it('keeps a keyed stream whose client left, its events and its assembled answer in the client’s terms', async () => {
    const marker = 'kept stream after failover'
    failPrimary('refused', marker)
    backup.steer(marker, { delay_ms: 300 })
    const body = JSON.stringify({ ...chatBody(marker), model: 'gpt-down', stream: true })
    const headers = { ...bearer(KEY_A), 'idempotency-key': 'kept-stream-after-failover' }
    await sendThenAbort(`${server.url}/v1/chat/completions`, { headers, body, afterMs: 50 })
    const record = await eventually(() => recordOf(body))
    expect(record.response.stream_raw).toContain('chat.completion.chunk')
    expect(record.response.stream_raw).toContain('data: [DONE]')
    const answer = JSON.parse(record.response.body_raw)
    expect(answer.object).toBe('chat.completion')
    expect(answer.choices[0].message.content).toBe(`Echo: ${marker}`)
    expect(got(backup, marker).map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'])
  })

  it('replays a keyed stream the same, without calling either upstream again', async () => {
    const marker = 'keyed stream after failover'
    failPrimary('429', marker)
    const send = () =>
      call(`${server.url}/v1/chat/completions`, {
        headers: { ...bearer(KEY_A), 'idempotency-key': 'keyed-stream-after-failover' },
        body: { ...chatBody(marker), model: 'gpt-main', stream: true },
      })
    const first = await send()
    expect(first.status).toBe(200)
    expect(first.text).toContain('chat.completion.chunk')
    expect(first.text).toContain('data: [DONE]')
    const again = await send()
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.text).toBe(first.text)
    expect([got(primary, marker).length, got(backup, marker).length]).toEqual([1, 1])
  })
})
