import { spawn } from 'node:child_process'
import http from 'node:http'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
// @ts-ignore -- plain JS example module (typed with JSDoc, no declaration file)
import { startMockUpstream as startMockUntyped } from '../examples/mock-upstream.mjs'

interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}
interface MockUpstream {
  url: string
  port: number
  requests: RecordedRequest[]
  abortedStreams: number
  completedCalls: number
  resetRequests(): void
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}
interface MockUpstreamOptions {
  port?: number
  host?: string
  delayMs?: number
  apiKey?: string
  record?: boolean
}
const startMockUpstream = startMockUntyped as (options?: MockUpstreamOptions) => Promise<MockUpstream>

const SCRIPT = fileURLToPath(new URL('../examples/mock-upstream.mjs', import.meta.url))

let mock: MockUpstream
const extra: MockUpstream[] = []

beforeEach(async () => {
  mock = await startMockUpstream()
})
afterEach(async () => {
  await mock.close()
  for (const m of extra.splice(0)) await m.close()
})

async function startExtra(options: MockUpstreamOptions): Promise<MockUpstream> {
  const m = await startMockUpstream(options)
  extra.push(m)
  return m
}

function post(path: string, body: unknown, init: RequestInit = {}, base = mock.url): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: init.signal ?? null,
  })
}

function chat(extraFields: Record<string, unknown> = {}, content = 'hello world') {
  return { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content }], ...extraFields }
}

function gemini(extraFields: Record<string, unknown> = {}, text = 'hello gemini') {
  return { contents: [{ role: 'user', parts: [{ text }] }], ...extraFields }
}

const GEN = '/v1beta/models/gemini-2.5-flash:generateContent'
const STREAM_SSE = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
const STREAM_ARRAY = '/v1beta/models/gemini-2.5-flash:streamGenerateContent'

/** Split an OpenAI SSE body into its data payloads (all frames end with \n\n). */
function openaiFrames(text: string): string[] {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true)
      return f.slice(6)
    })
}

/** Split a Gemini SSE body (frames end with \r\n\r\n) into parsed objects. */
function geminiFrames(text: string): any[] {
  expect(text.endsWith('\r\n\r\n')).toBe(true)
  return text
    .slice(0, -4)
    .split('\r\n\r\n')
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true)
      return JSON.parse(f.slice(6))
    })
}

/** Raw node:http request resolving with the response and every 'data' chunk with its arrival time. */
function rawRequest(path: string, body: unknown): Promise<{ res: http.IncomingMessage; chunks: { t: number; s: string }[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request(mock.url + path, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: { t: number; s: string }[] = []
      res.setEncoding('utf8')
      res.on('data', (s: string) => chunks.push({ t: Date.now(), s }))
      res.on('end', () => resolve({ res, chunks }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

describe('routes', () => {
  it('GET /v1/models returns an OpenAI model list', async () => {
    const res = await fetch(`${mock.url}/v1/models`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(body.object).toBe('list')
    expect(body.data.length).toBeGreaterThan(0)
    for (const m of body.data) {
      expect(m).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: expect.any(String) })
    }
  })

  it('url has no trailing slash and points at the listening port', () => {
    expect(mock.url).toBe(`http://127.0.0.1:${mock.port}`)
    expect(mock.port).toBeGreaterThan(0)
  })

  it('non-streaming chat completion has the SPEC 2.4 shape and echoes the last user message', async () => {
    const res = await post('/v1/chat/completions', chat({}, 'ping'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json')
    const body = (await res.json()) as any
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl-mock-\d+$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Echo: ping', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      service_tier: 'default',
      system_fingerprint: null,
    })
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens)
    expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(5)
  })

  it('chat completion ids are unique per request', async () => {
    const a = (await (await post('/v1/chat/completions', chat())).json()) as any
    const b = (await (await post('/v1/chat/completions', chat())).json()) as any
    expect(a.id).not.toBe(b.id)
  })

  it('echoes array-of-parts message content', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
    })
    expect(((await res.json()) as any).choices[0].message.content).toBe('Echo: ab')
  })

  it('n returns that many choices', async () => {
    const body = (await (await post('/v1/chat/completions', chat({ n: 3 }))).json()) as any
    expect(body.choices.map((c: any) => c.index)).toEqual([0, 1, 2])
    expect(new Set(body.choices.map((c: any) => c.message.content))).toEqual(new Set(['Echo: hello world']))
  })

  it('streaming chat completion: role frame, 5 content deltas, finish frame, [DONE]', async () => {
    const res = await post('/v1/chat/completions', chat({ stream: true }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const frames = openaiFrames(await res.text())
    expect(frames.at(-1)).toBe('[DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f))
    expect(chunks).toHaveLength(1 + 5 + 1)
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk')
      expect(c.id).toBe(chunks[0].id)
      expect(c.model).toBe('gpt-4o-mini')
      expect(c).not.toHaveProperty('usage')
    }
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' })
    expect(chunks[0].choices[0].finish_reason).toBeNull()
    const deltas = chunks.slice(1, 6).map((c) => c.choices[0].delta.content)
    expect(deltas.join('')).toBe('Echo: hello world')
    expect(chunks[6].choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }])
  })

  it('streaming with stream_options.include_usage ends with a usage chunk with choices: []', async () => {
    const res = await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } }))
    const frames = openaiFrames(await res.text())
    expect(frames.at(-1)).toBe('[DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f))
    const last = chunks.at(-1)
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) })
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens)
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull()
  })

  it('streaming usage equals non-streaming usage for the same request', async () => {
    const plain = (await (await post('/v1/chat/completions', chat())).json()) as any
    const res = await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } }))
    const chunks = openaiFrames(await res.text()).slice(0, -1).map((f) => JSON.parse(f))
    expect(chunks.at(-1).usage).toEqual(plain.usage)
  })

  it('streaming writes each frame separately (visible with chunk_delay_ms)', async () => {
    const { res, chunks } = await rawRequest('/v1/chat/completions', chat({ stream: true, mock: { chunks: 3, chunk_delay_ms: 30 } }))
    expect(res.statusCode).toBe(200)
    // role + 3 deltas + finish + [DONE]: each arrives in its own read, 30 ms apart.
    expect(chunks).toHaveLength(6)
    for (const c of chunks) expect(c.s).toMatch(/^data: .*\n\n$/s)
    for (let i = 1; i < chunks.length; i++) {
      expect(chunks[i]!.t - chunks[i - 1]!.t).toBeGreaterThanOrEqual(20)
    }
  })

  it('Gemini generateContent has the SPEC 2.5 shape with modelVersion from the path', async () => {
    const res = await post(GEN, gemini({}, 'hi'))
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(body).toEqual({
      candidates: [{ content: { parts: [{ text: 'Echo: hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: expect.any(Number),
        candidatesTokenCount: expect.any(Number),
        totalTokenCount: expect.any(Number),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: expect.any(Number) }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: expect.any(String),
    })
    const u = body.usageMetadata
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount)
    expect(u.promptTokensDetails[0].tokenCount).toBe(u.promptTokenCount)
  })

  it('Gemini streamGenerateContent?alt=sse sends data: frames ending in \\r\\n\\r\\n, usage and STOP on the last', async () => {
    const res = await post(STREAM_SSE, gemini())
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const frames = geminiFrames(await res.text())
    expect(frames).toHaveLength(5)
    expect(frames.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('Echo: hello gemini')
    for (const f of frames) {
      expect(f.modelVersion).toBe('gemini-2.5-flash')
      expect(f.responseId).toBe(frames[0].responseId)
      expect(f.candidates[0].content.role).toBe('model')
    }
    for (const f of frames.slice(0, -1)) {
      expect(f).not.toHaveProperty('usageMetadata')
      expect(f.candidates[0]).not.toHaveProperty('finishReason')
    }
    const last = frames.at(-1)
    expect(last.candidates[0].finishReason).toBe('STOP')
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number) })
  })

  it('Gemini streamGenerateContent without alt=sse returns a JSON array of response objects', async () => {
    const res = await post(STREAM_ARRAY, gemini({ mock: { chunks: 3 } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const arr = (await res.json()) as any[]
    expect(Array.isArray(arr)).toBe(true)
    expect(arr).toHaveLength(3)
    expect(arr.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('Echo: hello gemini')
    expect(arr[2].usageMetadata).toBeDefined()
    expect(arr[2].candidates[0].finishReason).toBe('STOP')
  })

  it('unknown routes answer 404 JSON in the family shape', async () => {
    const a = await fetch(`${mock.url}/v1/nope`)
    expect(a.status).toBe(404)
    expect(((await a.json()) as any).error).toMatchObject({ message: expect.any(String), type: 'invalid_request_error' })
    const b = await post('/v1beta/models/x:countTokens', gemini())
    expect(b.status).toBe(404)
    expect(((await b.json()) as any).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
    const c = await fetch(`${mock.url}/v1/chat/completions`) // wrong method
    expect(c.status).toBe(404)
  })

  it('a body that is not JSON answers 400', async () => {
    const a = await post('/v1/chat/completions', '{not json')
    expect(a.status).toBe(400)
    expect(((await a.json()) as any).error.type).toBe('invalid_request_error')
    const b = await post(GEN, 'nope')
    expect(b.status).toBe(400)
    expect(((await b.json()) as any).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
  })
})

describe('controls', () => {
  it('mock.delay_ms delays the response headers', async () => {
    const t0 = Date.now()
    const res = await post('/v1/chat/completions', chat({ mock: { delay_ms: 150 } }))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    expect(res.status).toBe(200)
  })

  it('mock.delay_ms on a stream delays the first frame', async () => {
    const t0 = Date.now()
    const { chunks } = await rawRequest('/v1/chat/completions', chat({ stream: true, mock: { delay_ms: 150 } }))
    expect(chunks[0]!.t - t0).toBeGreaterThanOrEqual(140)
  })

  it('the server delayMs option is the default delay, and mock.delay_ms overrides it', async () => {
    const slow = await startExtra({ delayMs: 150 })
    let t0 = Date.now()
    await (await post('/v1/chat/completions', chat(), {}, slow.url)).json()
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    t0 = Date.now()
    await (await post('/v1/chat/completions', chat({ mock: { delay_ms: 0 } }), {}, slow.url)).json()
    expect(Date.now() - t0).toBeLessThan(140)
  })

  it('mock.status with error_body answers that status and body', async () => {
    const errorBody = { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }
    const res = await post('/v1/chat/completions', chat({ mock: { status: 429, error_body: errorBody, headers: { 'retry-after': '1' } } }))
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual(errorBody)
  })

  it('mock.status without error_body uses the route family error shape', async () => {
    const a = await post('/v1/chat/completions', chat({ stream: true, mock: { status: 500 } }))
    expect(a.status).toBe(500)
    expect(((await a.json()) as any).error).toMatchObject({ message: expect.any(String), type: 'server_error' })
    const b = await post(STREAM_SSE, gemini({ mock: { status: 503 } }))
    expect(b.status).toBe(503)
    expect(((await b.json()) as any).error).toEqual({ code: 503, message: expect.any(String), status: 'UNAVAILABLE' })
  })

  it('mock.chunks sets the number of content deltas (OpenAI and Gemini)', async () => {
    const a = await post('/v1/chat/completions', chat({ stream: true, mock: { chunks: 12 } }, 'a longer message to split'))
    const chunks = openaiFrames(await a.text()).slice(0, -1).map((f) => JSON.parse(f))
    const deltas = chunks.filter((c) => typeof c.choices[0]?.delta.content === 'string' && !c.choices[0].delta.role)
    expect(deltas).toHaveLength(12)
    expect(deltas.map((c) => c.choices[0].delta.content).join('')).toBe('Echo: a longer message to split')
    const b = await post(STREAM_SSE, gemini({ mock: { chunks: 2 } }))
    expect(geminiFrames(await b.text())).toHaveLength(2)
  })

  it('mock.content sets the exact reply text', async () => {
    const a = (await (await post('/v1/chat/completions', chat({ mock: { content: 'Ünïcödé 🎉 reply' } }))).json()) as any
    expect(a.choices[0].message.content).toBe('Ünïcödé 🎉 reply')
    const res = await post(STREAM_SSE, gemini({ mock: { content: '🎉🎉🎉', chunks: 4 } }))
    const frames = geminiFrames(await res.text())
    expect(frames.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('🎉🎉🎉')
  })

  it('mock.content_bytes makes a multi-MB reply of exactly that many bytes', async () => {
    const size = 3 * 1024 * 1024 + 7
    const a = (await (await post('/v1/chat/completions', chat({ mock: { content_bytes: size } }))).json()) as any
    expect(Buffer.byteLength(a.choices[0].message.content)).toBe(size)
    const res = await post(STREAM_SSE, gemini({ mock: { content_bytes: size } }))
    const text = geminiFrames(await res.text())
      .map((f) => f.candidates[0].content.parts[0].text)
      .join('')
    expect(Buffer.byteLength(text)).toBe(size)
  })

  it('mock.usage is merged into usage (OpenAI) and usageMetadata (Gemini)', async () => {
    const a = (await (
      await post('/v1/chat/completions', chat({ mock: { usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } } }))
    ).json()) as any
    expect(a.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 })
    expect(a.usage.prompt_tokens_details).toEqual({ cached_tokens: 0, audio_tokens: 0 })

    const extraUsage = { thoughtsTokenCount: 7, toolUsePromptTokenCount: 3, totalTokenCount: 99 }
    const b = (await (await post(GEN, gemini({ mock: { usage: extraUsage } }))).json()) as any
    expect(b.usageMetadata).toMatchObject({ ...extraUsage, promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number) })

    const res = await post(STREAM_SSE, gemini({ mock: { usage: extraUsage } }))
    expect(geminiFrames(await res.text()).at(-1).usageMetadata).toMatchObject(extraUsage)

    const s = await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true }, mock: { usage: { prompt_tokens: 5 } } }))
    const chunks = openaiFrames(await s.text()).slice(0, -1).map((f) => JSON.parse(f))
    expect(chunks.at(-1).usage.prompt_tokens).toBe(5)
  })

  it('mock.hang never answers; aborting the client frees it without counting a completed call', async () => {
    const ac = new AbortController()
    const p = post('/v1/chat/completions', chat({ mock: { hang: true } }), { signal: ac.signal })
    await mock.waitFor(() => mock.requests.length === 1)
    const settled = await Promise.race([p.then(() => 'answered', () => 'failed'), new Promise((r) => setTimeout(() => r('pending'), 200))])
    expect(settled).toBe('pending')
    ac.abort()
    await expect(p).rejects.toThrow()
    await new Promise((r) => setTimeout(r, 50))
    expect(mock.completedCalls).toBe(0)
    expect(mock.abortedStreams).toBe(0) // not a stream
  })

  it('mock.destroy destroys the socket without answering', async () => {
    await expect(post('/v1/chat/completions', chat({ mock: { destroy: true } }))).rejects.toThrow()
    await expect(post(GEN, gemini({ mock: { destroy: true, delay_ms: 20 } }))).rejects.toThrow()
    expect(mock.completedCalls).toBe(0)
    expect(mock.abortedStreams).toBe(0)
    // The server keeps working afterwards.
    expect((await post('/v1/chat/completions', chat())).status).toBe(200)
  })

  it('mock.destroy_after_frames breaks a stream after that many frames', async () => {
    const res = await post('/v1/chat/completions', chat({ stream: true, mock: { destroy_after_frames: 3 } }))
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    let text = ''
    let error: unknown
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        text += dec.decode(value, { stream: true })
      }
    } catch (err) {
      error = err
    }
    expect(error).toBeDefined()
    expect(text.split('\n\n').filter(Boolean)).toHaveLength(3)
    expect(text).not.toContain('[DONE]')
    expect(mock.abortedStreams).toBe(0) // the server broke it, not the client
  })

  it('requests missing model/messages (OpenAI) or contents (Gemini) answer 400', async () => {
    expect((await post('/v1/chat/completions', { messages: [] })).status).toBe(400)
    expect((await post('/v1/chat/completions', { model: 'm' })).status).toBe(400)
    expect((await post(GEN, { foo: 1 })).status).toBe(400)
  })
})

describe('recording', () => {
  it('records method, path (with query), headers and body of every request', async () => {
    const body = JSON.stringify(chat())
    await post('/v1/chat/completions', body, { headers: { 'x-test': 'yes' } })
    await post(STREAM_SSE, gemini())
    await fetch(`${mock.url}/v1/models`)
    expect(mock.requests).toHaveLength(3)
    const [a, b, c] = mock.requests
    expect(a).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body })
    expect(a!.headers['x-test']).toBe('yes')
    expect(a!.headers['content-type']).toBe('application/json')
    expect(b!.path).toBe(STREAM_SSE)
    expect(JSON.parse(b!.body)).toEqual(gemini())
    expect(c).toMatchObject({ method: 'GET', path: '/v1/models', body: '' })
  })

  it('records non-JSON and 404 requests too', async () => {
    await post('/v1/chat/completions', 'garbage')
    await fetch(`${mock.url}/elsewhere`)
    expect(mock.requests.map((r) => r.body)).toEqual(['garbage', ''])
  })

  it('resetRequests empties the same array in place', async () => {
    const ref = mock.requests
    await post('/v1/chat/completions', chat())
    expect(ref).toHaveLength(1)
    mock.resetRequests()
    expect(mock.requests).toBe(ref)
    expect(mock.requests).toHaveLength(0)
  })

  it('record: false records nothing', async () => {
    const m = await startExtra({ record: false })
    expect((await post('/v1/chat/completions', chat(), {}, m.url)).status).toBe(200)
    expect(m.requests).toHaveLength(0)
    expect(m.completedCalls).toBe(1)
  })

  it('reads and records a 20+ MB request body intact', async () => {
    const big = 'x'.repeat(21 * 1024 * 1024)
    const res = await post('/v1/chat/completions', chat({ mock: { content: 'ok' } }, big))
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(body.choices[0].message.content).toBe('ok')
    expect(body.usage.prompt_tokens).toBeGreaterThan(5 * 1024 * 1024)
    const rec = mock.requests[0]!
    expect(rec.body.length).toBe(JSON.stringify(chat({ mock: { content: 'ok' } }, big)).length)
    expect(JSON.parse(rec.body).messages[1].content.length).toBe(big.length)
  })
})

describe('apiKey', () => {
  const KEY = 'sk-mock-123'
  const OPENAI_401 = { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }

  it('OpenAI: missing or wrong Bearer key → 401 invalid_api_key; right key → 200', async () => {
    const m = await startExtra({ apiKey: KEY })
    const missing = await post('/v1/chat/completions', chat(), {}, m.url)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual(OPENAI_401)
    const wrong = await post('/v1/chat/completions', chat(), { headers: { authorization: 'Bearer sk-wrong' } }, m.url)
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual(OPENAI_401)
    const ok = await post('/v1/chat/completions', chat(), { headers: { authorization: `Bearer ${KEY}` } }, m.url)
    expect(ok.status).toBe(200)
    expect((await fetch(`${m.url}/v1/models`)).status).toBe(401)
    expect((await fetch(`${m.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200)
  })

  it('Gemini: missing key → 401 UNAUTHENTICATED, wrong key → 400 INVALID_ARGUMENT, right key (header or ?key=) → 200', async () => {
    const m = await startExtra({ apiKey: KEY })
    const missing = await post(GEN, gemini(), {}, m.url)
    expect(missing.status).toBe(401)
    expect(((await missing.json()) as any).error).toEqual({ code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' })
    const wrong = await post(GEN, gemini(), { headers: { 'x-goog-api-key': 'nope' } }, m.url)
    expect(wrong.status).toBe(400)
    expect(((await wrong.json()) as any).error).toMatchObject({ code: 400, message: expect.stringContaining('API key not valid'), status: 'INVALID_ARGUMENT' })
    // An OpenAI-style bearer key is not a Gemini key.
    expect((await post(GEN, gemini(), { headers: { authorization: `Bearer ${KEY}` } }, m.url)).status).toBe(401)
    expect((await post(STREAM_SSE, gemini(), { headers: { 'x-goog-api-key': KEY } }, m.url)).status).toBe(200)
    expect((await post(`${GEN}?key=${KEY}`, gemini(), {}, m.url)).status).toBe(200)
  })
})

describe('abort tracking', () => {
  it('counts a stream whose client goes away mid-stream in abortedStreams and stops writing', async () => {
    const ac = new AbortController()
    const res = await post('/v1/chat/completions', chat({ stream: true, mock: { chunks: 50, chunk_delay_ms: 20 } }), { signal: ac.signal })
    const reader = res.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"')
    ac.abort()
    await mock.waitFor(() => mock.abortedStreams === 1)
    await new Promise((r) => setTimeout(r, 100))
    expect(mock.abortedStreams).toBe(1)
    expect(mock.completedCalls).toBe(0)
  })

  it('counts a stream aborted during its initial delay, and a hanging stream aborted by the client', async () => {
    const ac1 = new AbortController()
    const p1 = post(STREAM_SSE, gemini({ mock: { delay_ms: 5000 } }), { signal: ac1.signal })
    const ac2 = new AbortController()
    const p2 = post('/v1/chat/completions', chat({ stream: true, mock: { hang: true } }), { signal: ac2.signal })
    await mock.waitFor(() => mock.requests.length === 2)
    ac1.abort()
    ac2.abort()
    await Promise.allSettled([p1, p2])
    await mock.waitFor(() => mock.abortedStreams === 2)
    expect(mock.completedCalls).toBe(0)
  })

  it('a non-streaming request aborted during its delay is not counted as an aborted stream', async () => {
    const ac = new AbortController()
    const p = post('/v1/chat/completions', chat({ mock: { delay_ms: 5000 } }), { signal: ac.signal })
    await mock.waitFor(() => mock.requests.length === 1)
    ac.abort()
    await expect(p).rejects.toThrow()
    await new Promise((r) => setTimeout(r, 50))
    expect(mock.abortedStreams).toBe(0)
    expect(mock.completedCalls).toBe(0)
  })

  it('completedCalls counts fully written responses, streams and errors alike', async () => {
    await (await post('/v1/chat/completions', chat())).text()
    await (await post('/v1/chat/completions', chat({ stream: true }))).text()
    await (await post(GEN, gemini({ mock: { status: 500 } }))).text()
    await (await fetch(`${mock.url}/missing`)).text()
    await mock.waitFor(() => mock.completedCalls === 4)
    expect(mock.abortedStreams).toBe(0)
  })

  it('waitFor resolves when the predicate holds and rejects on timeout', async () => {
    await expect(mock.waitFor(() => true)).resolves.toBeUndefined()
    const t0 = Date.now()
    await expect(mock.waitFor(() => false, 60)).rejects.toThrow(/60 ms/)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55)
  })
})

describe('lifecycle', () => {
  it('close() resolves promptly with a hanging request open and the client sees an error', async () => {
    const m = await startMockUpstream()
    const p = post('/v1/chat/completions', chat({ stream: true, mock: { hang: true } }), {}, m.url)
    await m.waitFor(() => m.requests.length === 1)
    const t0 = Date.now()
    await m.close()
    expect(Date.now() - t0).toBeLessThan(1000)
    await expect(p).rejects.toThrow()
  })

  it('close() resolves promptly with an idle keep-alive connection and a pending delayed stream', async () => {
    const m = await startMockUpstream()
    await (await post('/v1/chat/completions', chat(), {}, m.url)).text() // leaves a keep-alive socket
    const p = post('/v1/chat/completions', chat({ stream: true, mock: { delay_ms: 60_000 } }), {}, m.url)
    await m.waitFor(() => m.requests.length === 2)
    const t0 = Date.now()
    await m.close()
    expect(Date.now() - t0).toBeLessThan(1000)
    await expect(p).rejects.toThrow()
  })

  it('runs as a script on MOCK_PORT and prints its URL', async () => {
    const child = spawn(process.execPath, [SCRIPT], { env: { ...process.env, MOCK_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 10_000)
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
          if (m && Number(m[1]) > 0) {
            clearTimeout(timer)
            resolve(m[0])
          }
        })
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)))
      })
      const res = await post('/v1/chat/completions', chat({}, 'script'), {}, url)
      expect(((await res.json()) as any).choices[0].message.content).toBe('Echo: script')
    } finally {
      child.kill('SIGTERM')
    }
  })
})
