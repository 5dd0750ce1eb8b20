import { createHook } from 'node:async_hooks'
import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { streamText } from 'ai'
import OpenAI from 'openai'
import { Pool } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRecoveringFetch } from '../../src/client/index.js'
import { isGatewayError } from '../../src/errors.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { startCuttingProxy } from '../support/cutting-proxy.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer, open } from '../support/http.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { NODE_KINDS } from '../support/servers.js'
import { cutAfterEvents, dataEvents } from '../support/sse-client.js'

const KEEP_ALIVE = ': keep-alive\n\n'
const node = NODE_KINDS[0] as (typeof NODE_KINDS)[number]
const CLAUDE = 'claude-haiku-4-5'
const GEMINI = 'gemini-2.5-flash'
/** A first byte after several intervals of 50 ms, and gaps of several intervals between events. */
const SLOW = { delay_ms: 300, chunks: 3, chunk_delay_ms: 200 }

/** A mock upstream of every format, a gateway in front of it with `options`, and a real server hosting it. */
interface Chain {
  url: string
  mock: MockUpstream
  gateway: Gateway
  close(): Promise<void>
}

async function startChain(options: Partial<GatewayOptions>, scripted?: ScriptedUpstream): Promise<Chain> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: {
      // A model of its own on an upstream that writes exactly the pieces a test scripts.
      ...(scripted ? { scripted: { type: 'openai' as const, baseUrl: `${scripted.url}/v1` } } : {}),
      oai: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt', upstream: 'oai' },
      { id: GEMINI, upstream: 'gem' },
      { id: CLAUDE, upstream: 'claude' },
      // Its upstream model name is what the mock is steered by: the fallback's request does not carry it.
      { id: 'flaky', upstream: 'oai', upstreamModel: 'flaky-upstream', fallbacks: ['gpt'] },
      ...(scripted ? [{ id: 'scripted', upstream: 'scripted' }] : []),
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { warn: () => {}, error: () => {} },
    ...options,
  })
  const server: MountedServer = await node.mount(gateway)
  return {
    url: server.url,
    mock,
    gateway,
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

function useChain(options: Partial<GatewayOptions>): Chain {
  const chain = {} as Chain
  beforeAll(async () => {
    Object.assign(chain, await startChain(options))
  })
  afterAll(() => chain.close())
  return chain
}

/** A fetch that lets a test read the bytes its SDK got, as they came from the gateway. */
function spyingFetch(): { fetch: typeof fetch; seen: () => string } {
  let seen = ''
  const decoder = new TextDecoder()
  // Taken now: a test may make the spy the global fetch.
  const real = globalThis.fetch
  const spy: typeof fetch = async (input, init) => {
    const response = await real(input, init)
    if (!response.body) return response
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += decoder.decode(chunk, { stream: true })
        controller.enqueue(chunk)
      },
    })
    return new Response(response.body.pipeThrough(tap), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
  return { fetch: spy, seen: () => seen }
}

/** The stream began with keep-alives (before the upstream's first byte) and had more between its events. */
function expectInterleaved(raw: string): void {
  expect(raw.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
  const firstData = raw.indexOf('data:')
  expect(firstData).toBeGreaterThan(0)
  expect(raw.indexOf(KEEP_ALIVE, firstData)).toBeGreaterThan(firstData)
}

const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt',
  messages: [{ role: 'user' as const, content }],
  stream: true as const,
  ...extra,
})

describe('keep-alive on streams (keepAlive.streamMs: 50)', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })

  it('an upstream whose head comes after several intervals: the 200 and keep-alive comments first, then the data', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('raw', { mock: SLOW }) })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    expect(res.headers['x-request-id']).toMatch(/^\w+$/)
    expectInterleaved(res.text)
    const withoutComments = res.text.split(KEEP_ALIVE).join('')
    expect(withoutComments).toContain('data: [DONE]\n\n')
    const text = [...withoutComments.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')
    expect(text).toBe('Echo: raw')
  })

  it("an upstream that sends its head at once and its first frame later: keep-alives after the upstream's head", async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('head first', { mock: { first_frame_delay_ms: 300 } }),
    })
    expect(res.status).toBe(200)
    // The head is the upstream's (its content type), sent with the first keep-alive.
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    expect(res.text).toContain('data: [DONE]\n\n')
  })

  it('nothing while bytes flow: a stream whose events come quicker than the interval gets no comment', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('quick', { mock: { chunks: 8 } }) })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain(': keep-alive')
  })

  it('openai chat.completions stream: the whole text, keep-alives before the first byte and between events', async () => {
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0, fetch: spy.fetch })
    const stream = await client.chat.completions.create(Object.assign(chatBody('sdk chat'), { stream: true as const, mock: SLOW }))
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('Echo: sdk chat')
    expectInterleaved(spy.seen())
  })

  it('openai responses stream: every event, numbered as before, with keep-alives around them', async () => {
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0, fetch: spy.fetch })
    chain.mock.steer('sdk responses', SLOW)
    const stream = await client.responses.create({ model: 'gpt', input: 'sdk responses', stream: true })
    let text = ''
    const numbers: number[] = []
    for await (const event of stream) {
      numbers.push(event.sequence_number)
      if (event.type === 'response.output_text.delta') text += event.delta
      if (event.type === 'response.completed') expect(event.response.status).toBe('completed')
    }
    expect(text).toBe('Echo: sdk responses')
    expect(numbers).toEqual(numbers.map((_, i) => i))
    expectInterleaved(spy.seen())
  })

  it('@google/genai generateContentStream: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk genai', SLOW)
    const original = globalThis.fetch
    // The SDK calls the global fetch; it is the spy for this test only.
    globalThis.fetch = spy.fetch
    try {
      const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: chain.url } })
      let text = ''
      for await (const chunk of await client.models.generateContentStream({ model: GEMINI, contents: 'sdk genai' }))
        text += chunk.text ?? ''
      expect(text).toBe('Echo: sdk genai')
    } finally {
      globalThis.fetch = original
    }
    expectInterleaved(spy.seen())
  })

  it('Vercel ai streamText with @ai-sdk/openai: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk vercel', SLOW)
    const provider = createOpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, fetch: spy.fetch })
    let failure: unknown
    const result = streamText({
      model: provider.chat('gpt'),
      prompt: 'sdk vercel',
      maxRetries: 0,
      onError: ({ error }) => {
        failure = error
      },
    })
    expect(await result.text).toBe('Echo: sdk vercel')
    expect(failure).toBeUndefined()
    expectInterleaved(spy.seen())
  })

  it('@anthropic-ai/sdk messages.stream: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk anthropic', SLOW)
    const client = new Anthropic({ apiKey: KEY_A, baseURL: chain.url, maxRetries: 0, fetch: spy.fetch })
    const stream = client.messages.stream({ model: CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'sdk anthropic' }] })
    expect(await stream.finalText()).toBe('Echo: sdk anthropic')
    expectInterleaved(spy.seen())
  })

  it("model-gateway/client's recovering fetch: a stream cut after keep-alives resumes where it was, the text whole", async () => {
    chain.mock.steer('client cut', { delay_ms: 300, chunks: 6, chunk_delay_ms: 120 })
    // The cut falls after the keep-alives and inside the second event: the client resumes from the gateway itself.
    const proxy = await startCuttingProxy(chain.url, () => ({ kind: 'cut-after-bytes', bytes: 600 }))
    try {
      const spy = spyingFetch()
      const steps: string[] = []
      const fetch = createRecoveringFetch({ baseUrls: [proxy.url, chain.url], fetch: spy.fetch, onEvent: (e) => steps.push(e.type) })
      const res = await fetch(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('client cut')),
      })
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(steps).toEqual(['attempt', 'resume'])
      const text = [...body.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')
      expect(text).toBe('Echo: client cut')
      expect(body).toContain('data: [DONE]')
      // Before the cut and in the resume alike, the comments came and passed through.
      expect(spy.seen().startsWith(KEEP_ALIVE)).toBe(true)
      expect(body.split(KEEP_ALIVE).length).toBeGreaterThan(3)
    } finally {
      await proxy.close()
    }
  })

  it('a model whose upstream fails after the keep-alive commit still falls back: the 200 stream carries the answer', async () => {
    chain.mock.steer('flaky-upstream', { delay_ms: 300, status: 503 })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('fallback', { model: 'flaky' }) })
    expect(res.status).toBe(200)
    expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    expect([...res.text.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')).toBe('Echo: fallback')
    expect(chain.mock.requests.filter((r) => r.body.includes('"fallback"')).map((r) => JSON.parse(r.body).model)).toEqual([
      'flaky-upstream',
      'gpt',
    ])
  })
})

describe('an upstream error after the keep-alive commit: a 200 stream ending with the dialect’s error event', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })
  const message = 'Mock upstream error (status 429).'
  const errorCases: Array<{
    name: string
    path: string
    headers: Record<string, string>
    body: (marker: string) => unknown
    event: (requestId: string) => string
  }> = [
    {
      name: 'chat completions',
      path: '/v1/chat/completions',
      headers: bearer(KEY_A),
      body: (marker: string) => chatBody(marker),
      event: () => `data: {"error":{"message":"${message}","type":"invalid_request_error","param":null,"code":"upstream_error"}}\n\n`,
    },
    {
      name: 'Responses',
      path: '/v1/responses',
      headers: bearer(KEY_A),
      body: (marker: string) => ({ model: 'gpt', input: marker, stream: true }),
      event: () =>
        `event: error\ndata: {"type":"error","code":"upstream_error","message":"${message}","param":null,"sequence_number":0}\n\n`,
    },
    {
      name: 'generate content',
      path: `/v1beta/models/${GEMINI}:streamGenerateContent?alt=sse`,
      headers: { 'x-goog-api-key': KEY_A },
      body: (marker: string) => ({ contents: [{ role: 'user', parts: [{ text: marker }] }] }),
      event: () => `data: {"error":{"code":429,"message":"${message}","status":"RESOURCE_EXHAUSTED"}}\n\n`,
    },
    {
      name: 'Messages',
      path: '/v1/messages',
      headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: (marker: string) => ({ model: CLAUDE, max_tokens: 16, messages: [{ role: 'user', content: marker }], stream: true }),
      event: (requestId: string) =>
        `event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"${message}"},"request_id":"${requestId}"}\n\n`,
    },
    {
      name: 'Messages translated to an OpenAI upstream',
      path: '/v1/messages',
      headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: (marker: string) => ({ model: 'gpt', max_tokens: 16, messages: [{ role: 'user', content: marker }], stream: true }),
      event: (requestId: string) =>
        `event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"${message}"},"request_id":"${requestId}"}\n\n`,
    },
  ]

  for (const c of errorCases) {
    it(`${c.name}: an upstream 429 after keep-alives`, async () => {
      const marker = `late 429 ${c.name}`
      chain.mock.steer(marker, { delay_ms: 300, status: 429 })
      const res = await call(`${chain.url}${c.path}`, { headers: c.headers, body: c.body(marker) })
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/event-stream')
      const requestId = String(res.headers['x-request-id'])
      expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
      expect(res.text.split(KEEP_ALIVE).join('')).toBe(c.event(requestId))
    })
  }

  it('an upstream that cannot be reached after keep-alives: the error event names it, and the SDK raises it', async () => {
    chain.mock.steer('late reset', { delay_ms: 300, destroy: true })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('late reset') })
    expect(res.status).toBe(200)
    expect(res.text.split(KEEP_ALIVE).join('')).toBe(
      'data: {"error":{"message":"The upstream model could not be reached.","type":"api_error","param":null,"code":"upstream_unreachable"}}\n\n',
    )
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0 })
    const run = async () => {
      for await (const _ of await client.chat.completions.create(Object.assign(chatBody('late reset'), { stream: true as const }))) {
        // Nothing comes before the error.
      }
    }
    await expect(run()).rejects.toThrow(/could not be reached/)
  })

  it('an error before the first keep-alive is still answered with its status', async () => {
    chain.mock.steer('early 429', { status: 429 })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('early 429') })
    expect(res.status).toBe(429)
    expect(res.text).not.toContain(': keep-alive')
  })
})

describe('resumes and records', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 }, recovery: { streams: 'finish' } })

  it('a resume that follows the live call gets keep-alives; the kept record and the numbering have none', async () => {
    chain.mock.steer('followed', { chunks: 4, chunk_delay_ms: 250 })
    const cut = await cutAfterEvents(`${chain.url}/v1/chat/completions`, bearer(KEY_A), chatBody('followed'), 1)
    expect(cut.seen).toBe(1)
    const resumed = await call(`${chain.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { ...bearer(KEY_A), 'last-event-id': '1' },
    })
    expect(resumed.status).toBe(200)
    expect(resumed.text).toContain(KEEP_ALIVE)
    const events = resumed.text.split(KEEP_ALIVE).join('')
    // Numbered on from the cut, one number per data event: the comments took none.
    expect([...events.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([2, 3, 4, 5, 6, 7])
    const record = await eventually(async () => {
      const got = await call(`${chain.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return got.status === 200 ? got.json : undefined
    })
    const kept = record.response.stream_raw as string
    expect(kept).not.toContain('keep-alive')
    expect(dataEvents(kept)).toBe(7)
  })
})

describe('a keep-alive never lands inside an event', () => {
  let scripted: ScriptedUpstream
  let chain: Chain
  beforeAll(async () => {
    scripted = await startScriptedUpstream()
    chain = await startChain({ keepAlive: { streamMs: 50 } }, scripted)
  })
  afterAll(async () => {
    await chain.close()
    await scripted.close()
  })

  it('an upstream quiet in the middle of an event gets no comment until the event is whole', async () => {
    const event = 'data: {"choices":[{"index":0,"delta":{"content":"whole"}}]}\n\n'
    const pieces = [event.slice(0, 20), event.slice(20), 'data: [DONE]\n\n']
    scripted.script(
      pieces.map((piece) => Buffer.from(piece)),
      { gated: true },
    )
    scripted.release()
    const cut = await open(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('cut event', { model: 'scripted' }),
    })
    let text = ''
    const ended = new Promise<void>((resolve) => {
      cut.body.on('data', (chunk: Buffer) => {
        text += chunk.toString()
      })
      cut.body.on('end', resolve)
    })
    await eventually(() => text === pieces[0])
    // Another stream of the same gateway, quiet at an event boundary, shows the sweeps went on meanwhile.
    chain.mock.steer('witness', { hang: true })
    const witness = await open(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('witness') })
    await new Promise<void>((resolve) => {
      let seen = ''
      witness.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString()
        if (seen.split(KEEP_ALIVE).length > 3) resolve()
      })
    })
    witness.body.destroy()
    expect(text).toBe(pieces[0])
    scripted.release()
    scripted.release()
    await ended
    // Quiet after the whole event: comments may follow it, never sit inside it.
    expect(text.split(KEEP_ALIVE).join('')).toBe(pieces.join(''))
    expect(text.startsWith(event)).toBe(true)
  })
})

describe('keepAlive.streamMs: 0', () => {
  const chain = useChain({ keepAlive: { streamMs: 0 } })

  it('sends no comment, however long the upstream is quiet', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('off', { mock: SLOW }) })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain(': keep-alive')
    expect(res.text.startsWith('data: ')).toBe(true)
  })
})

describe('one sweeper for every stream', () => {
  const chain = useChain({ keepAlive: { streamMs: 100 } })
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length
  // Unreferenced timers are not among the active resources: every timer made, referenced or not, is counted here.
  const created = {
    count: 0,
    hook: createHook({
      init: (_id, type) => {
        if (type === 'Timeout') created.count++
      },
    }),
    enable: () => created.hook.enable(),
    disable: () => created.hook.disable(),
  }

  it('1 000 held streams cost no more timers than one', { timeout: 60_000 }, async () => {
    chain.mock.steer('held forever', { hang: true })
    const pool = new Pool(chain.url, { connections: 1000, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
    const hold = () =>
      pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('held forever')),
      })
    try {
      // Each request resolves on its head, which only a keep-alive sends: the upstream never answers.
      const first = await hold()
      expect(first.statusCode).toBe(200)
      const withOne = timers()
      created.enable()
      const rest = await Promise.all(Array.from({ length: 999 }, hold))
      expect(rest.every((r) => r.statusCode === 200)).toBe(true)
      expect(timers()).toBeLessThanOrEqual(withOne)
      created.disable()
      // A timer per stream would be 999 more; what is made is the undici and server machinery's handful.
      expect(created.count).toBeLessThan(100)
      // Every one of them is kept alive: each gets its next comment.
      const comments = await Promise.all(
        [first, ...rest].map(
          (r) =>
            new Promise<string>((resolve) => {
              let text = ''
              r.body.on('data', (chunk: Buffer) => {
                text += chunk.toString()
                if (text.includes(`${KEEP_ALIVE}${KEEP_ALIVE}`)) resolve(text)
              })
            }),
        ),
      )
      expect(comments).toHaveLength(1000)
    } finally {
      await pool.destroy()
      chain.mock.steer('held forever', undefined)
    }
  })
})

describe('keepAlive options', () => {
  const base = {
    upstreams: { oai: { type: 'openai' as const, baseUrl: 'http://127.0.0.1:9/v1' } },
    models: [{ id: 'gpt', upstream: 'oai' }],
    auth: { apiKeys: [KEY_A] },
  }
  const refusal = (keepAlive: unknown) => {
    try {
      createGateway({ ...base, keepAlive } as GatewayOptions)
    } catch (error) {
      return isGatewayError(error) ? `${error.code}: ${error.message}` : String(error)
    }
    return 'accepted'
  }

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '15000', 2 ** 31])('refuses streamMs %s, naming the option', (value) => {
    expect(refusal({ streamMs: value })).toBe(
      `invalid_options: keepAlive.streamMs must be a whole number of ms from 0 (off) to 2147483647, got ${String(value)}`,
    )
  })

  it('refuses a keepAlive that is not an object, and a misspelt key with the right one', () => {
    expect(refusal(15000)).toBe('invalid_options: keepAlive must be an object')
    expect(refusal({ streamMS: 100 })).toMatch(/^invalid_options: keepAlive\.streamMS is not an option; did you mean `streamMs`\?/)
  })

  it('takes 0, a whole number of ms, or nothing (the default)', async () => {
    for (const keepAlive of [{ streamMs: 0 }, { streamMs: 1 }, { streamMs: 60_000 }, {}, undefined]) {
      const gateway = createGateway({ ...base, keepAlive })
      await gateway.close()
    }
  })
})
