import http from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { REQUEST_ID_PATTERN } from '../../src/http/request-id.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { describeMatrix, describeOnce, forwardedBody } from '../support/servers.js'

// Small enough that a 4.5 MB body is refused, large enough for the 2 MB ones.
const LIMITS = { limits: { maxRequestBytes: 4 * 1024 * 1024 } }

describeMatrix('chat completions and models', (kind) => {
  const fx = useFixture(kind, LIMITS)

  it('forwards a chat request byte for byte with the upstream key, and returns the completion', async () => {
    fx.mock.resetRequests()
    const sent = '{ "messages": [ {"role":"user","content":"héllo 世界"} ],\n "model":"gpt-4o-mini", "logit_bias": {"50256": -2.50} }'
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: sent,
    })
    expect(res.status).toBe(200)
    expect(res.json.object).toBe('chat.completion')
    expect(res.json.choices[0].message.content).toContain('héllo 世界')
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
    expect(fx.mock.requests).toHaveLength(1)
    const upstream = fx.mock.requests[0]!
    expect(upstream.path).toBe('/v1/chat/completions')
    expect(upstream.body).toBe(forwardedBody(kind, sent))
    expect(upstream.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    expect(JSON.stringify(upstream.headers)).not.toContain(KEY_A)
  })

  it('sends the upstream model name and keeps every other byte', async () => {
    fx.mock.resetRequests()
    const sent = '{"model" : "renamed","messages":[{"role":"user","content":"the \\"model\\": \\"x\\""}],"seed":12345678901234567890}'
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: sent,
    })
    expect(res.status).toBe(200)
    expect(fx.mock.requests[0]!.body).toBe(forwardedBody(kind, sent).replace('"renamed"', '"upstream-name"'))
  })

  it('relays a stream frame by frame as SSE', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('stream me', { stream: true, mock: { chunks: 4 } }),
    })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    const frames = res.text.split('\n\n').filter(Boolean)
    expect(frames.at(-1)).toBe('data: [DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice('data: '.length)))
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true)
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toContain('stream me')
  })

  it('answers 415 for a compressed body it would have to read itself; a host parser in front inflates it', async () => {
    fx.mock.resetRequests()
    const text = JSON.stringify(chatBody('zipped'))
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(text),
    })
    if (kind.body === 'stream') {
      expect(res.status).toBe(415)
      expect(res.json.error.message).toMatch(/Content-Encoding 'gzip'/)
      expect(fx.mock.requests).toHaveLength(0)
    } else {
      expect(res.status).toBe(200)
      expect(fx.mock.requests[0]!.body).toBe(forwardedBody(kind, text))
    }
  })

  it.each([
    ['not JSON', '{"model":', undefined],
    ['a JSON array', '[1,2]', undefined],
    ['a JSON scalar', '"text"', undefined],
    ['JSON nested 100 000 levels deep', '['.repeat(100_000) + ']'.repeat(100_000), undefined],
    ['an object nested 100 000 levels deep (past limits.maxJsonDepth)', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, undefined],
    ['2 MB of JSON cut off mid-string (scanned, not parsed)', JSON.stringify(chatBody('x'.repeat(2 << 20))).slice(0, -20), undefined],
    ['2 MB of JSON with a stray comma at the end', `${JSON.stringify(chatBody('y'.repeat(2 << 20))).slice(0, -1)},}`, undefined],
  ])('answers 400 for a body that is %s', async (_name, body, param) => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(400)
    // A host JSON parser in front rejects what it cannot parse itself, with the same status and its own body.
    if (kind.badJson === 'host' && res.json?.host_error !== undefined) return
    expect(res.json.error.type).toBe('invalid_request_error')
    // A re-serialised body is checked only once it could be re-serialised, which a 100 000-deep value cannot.
    if (param && kind.body !== 'parsed') expect(res.json.error.param).toBe(param)
  })

  it.each([
    ['temperature', { temperature: 3 }],
    ['model', { model: 42 }],
    ['messages[1].role', { messages: [{ role: 'user', content: 'z'.repeat(2 << 20) }, { content: 'no role' }] }],
  ])('checks a body above 1 MiB just as strictly, naming %s', async (param, patch) => {
    fx.mock.resetRequests()
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: { ...chatBody('w'.repeat(2 << 20)), ...patch },
    })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe(param)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('forwards a valid body above 1 MiB unchanged', async () => {
    fx.mock.resetRequests()
    const sent = JSON.stringify(chatBody(`big ${'é"\\n'.repeat(250_000)}`, { stream: false, temperature: 0.2 }))
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: sent,
    })
    expect(res.status).toBe(200)
    expect(fx.mock.requests[0]!.body).toBe(forwardedBody(kind, sent))
  })

  it('answers 413 for a body above the limit without forwarding it, with or without content-length', async () => {
    fx.mock.resetRequests()
    const big = JSON.stringify(chatBody('x'.repeat(4500 * 1024)))
    const declared = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: big,
    })
    expect(declared.status).toBe(413)
    expect(declared.json.error.code).toBe('request_too_large')
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${fx.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      })
      req.on('response', (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      const piece = 32 * 1024
      for (let at = 0; at < big.length; at += piece) req.write(big.slice(at, at + piece))
      req.end()
    })
    expect(chunked).toBe(413)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('answers 404 for an unknown path under the gateway, or leaves it to the host', async () => {
    const res = await call(`${fx.url}/v1/nothing-here`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(404)
    if (kind.unknownPath === 'gateway') {
      expect(res.json.error.code).toBe('not_found')
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
    } else {
      // The host's own 404: the gateway left the response alone.
      expect(res.headers['x-request-id']).toBeUndefined()
    }
  })

  it('passes an upstream error through verbatim', async () => {
    const errorBody = '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('x', { mock: { status: 429, error_body: errorBody } }),
    })
    expect(res.status).toBe(429)
    expect(res.text).toBe(errorBody)
  })
})

describeOnce('chat completions and models', (kind) => {
  const fx = useFixture(kind, LIMITS)

  it('lists the configured models without auth', async () => {
    const res = await call(`${fx.url}/v1/models`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      object: 'list',
      data: [
        { id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'mock' },
        { id: 'renamed', object: 'model', created: 1700000001, owned_by: 'acme' },
        { id: 'gemini-2.5-flash', object: 'model', created: 1700000002, owned_by: 'gem' },
      ],
    })
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
  })

  it('request ids are unique and increase', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await call(`${fx.url}/v1/models`)).headers['x-request-id'] as string)
    expect(new Set(ids).size).toBe(5)
    expect([...ids].sort()).toEqual(ids)
  })

  it('answers 401 in OpenAI shape without a key or with a wrong one', async () => {
    for (const headers of [{}, bearer('sk-wrong'), { authorization: KEY_A }]) {
      const res = await call(`${fx.url}/v1/chat/completions`, { headers, body: chatBody() })
      expect(res.status).toBe(401)
      expect(res.json).toEqual({
        error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
      })
    }
  })

  it('answers 415 for a body that is not application/json', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'text/plain' },
      body: JSON.stringify(chatBody()),
    })
    expect(res.status).toBe(415)
    expect(res.json.error.code).toBe('unsupported_media_type')
  })

  it.each([
    ['model', { model: 42 }],
    ['messages', { messages: [] }],
    ['messages', { messages: 'hi' }],
    ['messages[0]', { messages: ['hi'] }],
    ['temperature', { temperature: 2.5 }],
    ['temperature', { temperature: '1' }],
    ['top_p', { top_p: -0.1 }],
    ['presence_penalty', { presence_penalty: 3 }],
    ['frequency_penalty', { frequency_penalty: -2.01 }],
    ['n', { n: 0 }],
    ['n', { n: 1.5 }],
    ['max_completion_tokens', { max_completion_tokens: 0 }],
    ['max_tokens', { max_tokens: 'ten' }],
    ['stream', { stream: 'yes' }],
  ])('answers 400 naming %s when it is invalid', async (param, patch) => {
    fx.mock.resetRequests()
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: { ...chatBody(), ...patch } })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe(param)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('accepts values at the edges of every range', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('edges', { temperature: 2, top_p: 0, presence_penalty: -2, frequency_penalty: 2, n: 1, max_tokens: 1 }),
    })
    expect(res.status).toBe(200)
  })

  it('answers 404 model_not_found for a model that is not configured (an upstream’s own name included)', async () => {
    for (const model of ['nope', 'upstream-name']) {
      const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { model }) })
      expect(res.status).toBe(404)
      expect(res.json.error.code).toBe('model_not_found')
    }
  })

  it('echoes only a bounded piece of a very long unknown model name', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { model: 'm'.repeat(100_000) }) })
    expect(res.status).toBe(404)
    expect(res.json.error.code).toBe('model_not_found')
    expect(res.json.error.message).toContain(`'${'m'.repeat(200)}…'`)
    expect(res.text.length).toBeLessThan(1000)
  })

  it('answers 405 for a known path with the wrong method', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(405)
    expect(res.headers.allow).toBe('POST')
  })
})

describeMatrix('upstream failures', (kind) => {
  const fx = useFixture(kind, { timeouts: { upstreamMs: 300 } })

  it('answers 504 when the upstream is slower than the timeout', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { mock: { hang: true } }) })
    expect(res.status).toBe(504)
    expect(res.json.error.code).toBe('upstream_timeout')
  })

  it('answers 502 when the upstream breaks the connection, naming neither its URL nor its key', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('x', { mock: { destroy: true } }) })
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_unreachable')
    expect(res.text).not.toContain(fx.mock.url)
    expect(res.text).not.toContain(UPSTREAM_KEY)
  })
})

describeMatrix('unreachable upstream', (kind) => {
  let fx: Fixture
  beforeAll(async () => {
    const port = await freePort()
    fx = await startFixture(kind, {
      upstreams: { dead: { type: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'dead' }],
    })
  })
  afterAll(() => fx.close())

  it('answers 502 when nothing listens upstream', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(res.status).toBe(502)
    expect(res.json.error.code).toBe('upstream_unreachable')
    expect(res.text).not.toContain('127.0.0.1')
    expect(res.text).not.toContain(UPSTREAM_KEY)
  })
})
