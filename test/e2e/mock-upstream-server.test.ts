import { describe, expect, it } from 'vitest'
import { startMockUpstream } from '../../src/testing/index.js'
import { call } from '../support/http.js'
import { chat, GEN, gemini, mock, post, postOpen, STREAM_SSE, startExtra, useFreshMock } from '../support/mock-upstream-harness.js'

useFreshMock()

describe('routes', () => {
  it('url has no trailing slash and points at the listening port', () => {
    expect(mock.url).toBe(`http://127.0.0.1:${mock.port}`)
    expect(mock.port).toBeGreaterThan(0)
  })

  it('unknown routes answer 404 JSON in the family shape', async () => {
    const a = await call(`${mock.url}/v1/nope`)
    expect(a.status).toBe(404)
    expect(a.json.error).toMatchObject({ message: expect.any(String), type: 'invalid_request_error' })
    const b = await post('/v1beta/models/x:predict', gemini())
    expect(b.status).toBe(404)
    expect(b.json.error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
    const c = await call(`${mock.url}/v1/chat/completions`) // wrong method
    expect(c.status).toBe(404)
  })

  it('a body that is not JSON answers 400', async () => {
    const a = await post('/v1/chat/completions', '{not json')
    expect(a.status).toBe(400)
    expect(a.json.error.type).toBe('invalid_request_error')
    const b = await post(GEN, 'nope')
    expect(b.status).toBe(400)
    expect(b.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
  })
})

describe('recording', () => {
  it('records method, path (with query), headers and body of every request', async () => {
    const body = JSON.stringify(chat())
    await post('/v1/chat/completions', body, { headers: { 'x-test': 'yes' } })
    await post(STREAM_SSE, gemini())
    await call(`${mock.url}/v1/models`)
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
    await call(`${mock.url}/elsewhere`)
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
    const body = res.json
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
    expect(missing.json).toEqual(OPENAI_401)
    const wrong = await post('/v1/chat/completions', chat(), { headers: { authorization: 'Bearer sk-wrong' } }, m.url)
    expect(wrong.status).toBe(401)
    expect(wrong.json).toEqual(OPENAI_401)
    const ok = await post('/v1/chat/completions', chat(), { headers: { authorization: `Bearer ${KEY}` } }, m.url)
    expect(ok.status).toBe(200)
    expect((await call(`${m.url}/v1/models`)).status).toBe(401)
    expect((await call(`${m.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200)
  })

  it('Gemini: missing key → 401 UNAUTHENTICATED, wrong key → 400 INVALID_ARGUMENT, right key (header or ?key=) → 200', async () => {
    const m = await startExtra({ apiKey: KEY })
    const missing = await post(GEN, gemini(), {}, m.url)
    expect(missing.status).toBe(401)
    expect(missing.json.error).toEqual({ code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' })
    const wrong = await post(GEN, gemini(), { headers: { 'x-goog-api-key': 'nope' } }, m.url)
    expect(wrong.status).toBe(400)
    expect(wrong.json.error).toMatchObject({ code: 400, message: expect.stringContaining('API key not valid'), status: 'INVALID_ARGUMENT' })
    // An OpenAI-style bearer key is not a Gemini key.
    expect((await post(GEN, gemini(), { headers: { authorization: `Bearer ${KEY}` } }, m.url)).status).toBe(401)
    expect((await post(STREAM_SSE, gemini(), { headers: { 'x-goog-api-key': KEY } }, m.url)).status).toBe(200)
    expect((await post(`${GEN}?key=${KEY}`, gemini(), {}, m.url)).status).toBe(200)
  })
})

describe('abort tracking', () => {
  it('counts a stream whose client goes away mid-stream in abortedStreams and stops writing', async () => {
    const ac = new AbortController()
    const res = await postOpen('/v1/chat/completions', chat({ stream: true, mock: { chunks: 50, chunk_delay_ms: 20 } }), {
      signal: ac.signal,
    })
    const first = await res.body[Symbol.asyncIterator]().next()
    expect(String(first.value)).toContain('"role":"assistant"')
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
    await post('/v1/chat/completions', chat())
    await post('/v1/chat/completions', chat({ stream: true }))
    await post(GEN, gemini({ mock: { status: 500 } }))
    await call(`${mock.url}/missing`)
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
    await post('/v1/chat/completions', chat(), {}, m.url) // leaves a keep-alive socket
    const p = post('/v1/chat/completions', chat({ stream: true, mock: { delay_ms: 60_000 } }), {}, m.url)
    await m.waitFor(() => m.requests.length === 2)
    const t0 = Date.now()
    await m.close()
    expect(Date.now() - t0).toBeLessThan(1000)
    await expect(p).rejects.toThrow()
  })
})
