import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { REQUEST_ID_PATTERN } from '../../src/http/request-id.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { ENDPOINTS, expectNotFound, goog, googleError, gpath, MODEL, rawPost } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeMatrix, describeOnce, forwardedBody } from '../support/servers.js'

// Small enough that a 1.1 MB body is refused.
const LIMITS = { limits: { maxRequestBytes: 1024 * 1024 } }

describeMatrix('Gemini generate-content', (kind) => {
  const fx = useFixture(kind, LIMITS)

  it('forwards generateContent byte for byte with the gateway key, and returns the response', async () => {
    fx.mock.resetRequests()
    const sent =
      '{ "contents": [ {"role":"user","parts":[{"text":"héllo 世界"}]} ],\n "generationConfig": {"temperature": 0.50}, "safetySettings": [ ] }'
    const res = await call(`${fx.url}${gpath(false)}`, { headers: { ...goog(KEY_A), 'content-type': 'application/json' }, body: sent })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
    expect(res.json.candidates[0].content.parts[0].text).toBe('Echo: héllo 世界')
    expect(res.json.modelVersion).toBe(MODEL)
    expect(res.json.usageMetadata.totalTokenCount).toBeGreaterThan(0)
    expect(fx.mock.requests).toHaveLength(1)
    const upstream = fx.mock.requests[0]!
    expect(upstream.path).toBe(`/v1beta/models/${MODEL}:generateContent`)
    expect(upstream.body).toBe(forwardedBody(kind, sent))
    expect(upstream.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
    expect(upstream.headers.authorization).toBeUndefined()
    expect(JSON.stringify(upstream)).not.toContain(KEY_A)
  })

  it('relays streamGenerateContent?alt=sse as server-sent events', async () => {
    fx.mock.resetRequests()
    const res = await call(`${fx.url}${gpath(true)}`, { headers: goog(KEY_A), body: geminiBody('stream me', { mock: { chunks: 4 } }) })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
    const frames = res.text.split('\r\n\r\n')
    expect(frames.pop()).toBe('')
    expect(frames).toHaveLength(4)
    expect(frames.every((f) => f.startsWith('data: '))).toBe(true)
    const chunks = frames.map((f) => JSON.parse(f.slice('data: '.length)))
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe('Echo: stream me')
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP')
    expect(chunks.at(-1).usageMetadata.totalTokenCount).toBeGreaterThan(0)
    expect(fx.mock.requests.map((r) => r.path)).toEqual([`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`])
  })

  it.each(ENDPOINTS)('serves $method under /v1 too (the Google GenAI SDK 3.x default), in Google’s shape', async ({ stream }) => {
    fx.mock.resetRequests()
    const v1 = (model = MODEL) => `${fx.url}${gpath(stream, model).replace('/v1beta/', '/v1/')}`
    const ok = await call(v1(), { headers: goog(KEY_A), body: geminiBody('stable', { mock: { chunks: 1 } }) })
    expect(ok.status).toBe(200)
    expect(ok.text).toContain('Echo: stable')
    expect(fx.mock.requests.map((r) => r.path)).toEqual([gpath(stream)])
    expect((await call(v1(), { body: geminiBody() })).json).toEqual(googleError(401, 'UNAUTHENTICATED'))
    expect((await call(v1('gemini-unknown'), { headers: goog(KEY_A), body: geminiBody() })).json).toEqual(googleError(404, 'NOT_FOUND'))
    expect((await call(v1(), { headers: goog(KEY_A), body: {} })).json).toEqual(googleError(400, 'INVALID_ARGUMENT'))
    expect(fx.mock.requests).toHaveLength(1)
  })

  it.each(ENDPOINTS)(
    'accepts x-goog-api-key, ?key= and Authorization: Bearer on $method, and sends only its own key upstream',
    async ({ stream }) => {
      const forms: Array<[Record<string, string>, string]> = [
        [goog(KEY_A), ''],
        [{}, `key=${KEY_A}`],
        [bearer(KEY_A), ''],
      ]
      for (const [headers, query] of forms) {
        fx.mock.resetRequests()
        const url = `${fx.url}${gpath(stream)}${query ? (stream ? '&' : '?') + query : ''}`
        const res = await call(url, { headers, body: geminiBody('auth') })
        expect(res.status).toBe(200)
        expect(fx.mock.requests).toHaveLength(1)
        const upstream = fx.mock.requests[0]!
        // The client's query string is never forwarded: `?key=` least of all.
        expect(upstream.path).toBe(`/v1beta/models/${MODEL}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`)
        expect(upstream.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
        expect(JSON.stringify(upstream)).not.toContain(KEY_A)
      }
    },
  )

  it.each([
    ['not JSON', '{"contents":'],
    ['a JSON array', '[{"contents":[]}]'],
    ['a JSON scalar', '"text"'],
    ['an object without contents', '{"generationConfig":{"temperature":1}}'],
    ['an object with empty contents', '{"contents":[]}'],
    ['an object whose contents is not an array', '{"contents":{"parts":[{"text":"x"}]}}'],
    ['an object with a content that is not an object', '{"contents":["hi"]}'],
  ])('answers 400 in Google’s shape for a body that is %s, on both endpoints', async (_name, body) => {
    fx.mock.resetRequests()
    for (const { stream } of ENDPOINTS) {
      const res = await call(`${fx.url}${gpath(stream)}`, { headers: { ...goog(KEY_A), 'content-type': 'application/json' }, body })
      expect(res.status).toBe(400)
      // A host JSON parser in front rejects what it cannot parse itself, with the same status and its own body.
      if (res.headers['x-request-id'] === undefined) expect(kind.badJson).toBe('host')
      else expect(res.json).toEqual(googleError(400, 'INVALID_ARGUMENT'))
    }
    expect(fx.mock.requests).toHaveLength(0)
  })

  // Google answers a body above its limit 400 INVALID_ARGUMENT: google.rpc.Code has no name for 413.
  it.each(ENDPOINTS)('answers 400 INVALID_ARGUMENT on $method for a body above the limit, without forwarding it', async ({ stream }) => {
    fx.mock.resetRequests()
    const res = await call(`${fx.url}${gpath(stream)}`, { headers: goog(KEY_A), body: geminiBody('x'.repeat(1100 * 1024)) })
    expect(res.status).toBe(400)
    expect(res.json).toEqual(googleError(400, 'INVALID_ARGUMENT'))
    expect(res.json.error.message).toMatch(/limit/)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('answers 404 for path games in the model segment, and nothing reaches the upstream', async () => {
    fx.mock.resetRequests()
    const games = [
      `/v1beta/models/../models/${MODEL}:generateContent`,
      `/v1beta/models/..%2F${MODEL}:generateContent`,
      `/v1beta/models/%2e%2e/models/${MODEL}:generateContent`,
      `/v1beta/models/%2E%2E%2F${MODEL}:streamGenerateContent?alt=sse`,
      `/v1beta/models/${MODEL}%3AgenerateContent`,
      `/v1beta/models/${MODEL}%3agenerateContent`,
      `/v1beta/models/${MODEL}:x:generateContent`,
      `/v1beta/models/x:${MODEL}:generateContent`,
      `/v1beta/models/${MODEL}/extra:generateContent`,
      `/v1beta/models/${MODEL}/..:generateContent`,
      `/v1beta/models/gpt-4o-mini/../${MODEL}:generateContent`,
      `/v1beta/models/${MODEL}%2F..%2F..%2Fv1%2Fchat%2Fcompletions:generateContent`,
      `/v1beta/models/${MODEL}:generateContent/../../../v1/chat/completions`,
      `/v1beta/models/${MODEL}:generateContent%3Falt=sse`,
      `/v1beta/models/${MODEL}%00:generateContent`,
      `/v1beta/models/%67emini-2.5-flash:generateContent`,
      `/v1beta/models/:generateContent`,
      `/v1beta//models/${MODEL}:generateContent`,
      `/v1beta/tunedModels/${MODEL}:generateContent`,
    ]
    for (const path of games) {
      const res = await rawPost(fx, path)
      expect(res.status, path).toBe(404)
      expectNotFound(kind, res)
    }
    expect(fx.mock.requests).toHaveLength(0)
    // The same client, with the plain path, gets through: the 404s above come from the paths alone.
    expect((await rawPost(fx, `/v1beta/models/${MODEL}:generateContent`)).status).toBe(200)
  })

  it.each(ENDPOINTS)('passes an upstream error on $method through verbatim, status, body and retry hint', async ({ stream }) => {
    const googleBody = {
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }],
      },
    }
    const json = await call(`${fx.url}${gpath(stream)}`, {
      headers: goog(KEY_A),
      body: geminiBody('x', { mock: { status: 429, error_body: googleBody, headers: { 'retry-after': '7' } } }),
    })
    expect(json.status).toBe(429)
    expect(json.text).toBe(JSON.stringify(googleBody))
    expect(json.headers['retry-after']).toBe('7')
    const text = await call(`${fx.url}${gpath(stream)}`, {
      headers: goog(KEY_A),
      body: geminiBody('x', { mock: { status: 503, error_body: 'upstream overloaded\n' } }),
    })
    expect(text.status).toBe(503)
    expect(text.text).toBe('upstream overloaded\n')
    expect(text.headers['content-type']).toMatch(/^text\/plain/)
  })

  it('aborts the upstream stream when its client leaves, and keeps no record', async () => {
    const aborted = fx.mock.abortedStreams
    await sendThenAbort(`${fx.url}${gpath(true)}`, {
      headers: goog(KEY_A),
      body: JSON.stringify(geminiBody('s', { mock: { chunks: 50, chunk_delay_ms: 50, delay_ms: 100 } })),
      afterMs: 30,
    })
    await fx.mock.waitFor(() => fx.mock.abortedStreams > aborted)
    expect((await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.count).toBe(0)
  })
})

describeOnce('Gemini generate-content', (kind) => {
  const fx = useFixture(kind, LIMITS)

  it.each(ENDPOINTS)('answers 401 in Google’s shape on $method without a valid key', async ({ stream }) => {
    fx.mock.resetRequests()
    const tries: Array<[Record<string, string>, string]> = [
      [{}, ''],
      [goog('sk-wrong'), ''],
      [{ 'x-goog-api-key': '' }, ''],
      [{}, 'key=sk-wrong'],
      [{}, 'key='],
      [{}, `api_key=${KEY_A}`],
      [bearer('sk-wrong'), ''],
      [{ authorization: KEY_A }, ''],
    ]
    for (const [headers, query] of tries) {
      const url = `${fx.url}${gpath(stream)}${query ? (stream ? '&' : '?') + query : ''}`
      const res = await call(url, { headers, body: geminiBody() })
      expect(res.status, JSON.stringify([headers, query])).toBe(401)
      expect(res.json).toEqual(googleError(401, 'UNAUTHENTICATED'))
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID_PATTERN)
    }
    // `?key=` is a /v1beta form only.
    const chat = await call(`${fx.url}/v1/chat/completions?key=${KEY_A}`, { body: chatBody('x') })
    expect(chat.status).toBe(401)
    expect(chat.json.error.code).toBe('invalid_api_key')
    expect(fx.mock.requests).toHaveLength(0)
  })

  it.each(ENDPOINTS)('answers 400 INVALID_ARGUMENT on $method for a body that is not application/json', async ({ stream }) => {
    fx.mock.resetRequests()
    for (const type of ['text/plain', 'application/jsonl', 'application/x-www-form-urlencoded']) {
      const res = await call(`${fx.url}${gpath(stream)}`, {
        headers: { ...goog(KEY_A), 'content-type': type },
        body: JSON.stringify(geminiBody()),
      })
      expect(res.status).toBe(400)
      expect(res.json).toEqual(googleError(400, 'INVALID_ARGUMENT'))
    }
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('answers 400 for an alt the gateway cannot honour, and forwards no query', async () => {
    fx.mock.resetRequests()
    const base = `${fx.url}/v1beta/models/${MODEL}`
    for (const url of [
      `${base}:streamGenerateContent`,
      `${base}:streamGenerateContent?alt=json`,
      `${base}:generateContent?alt=sse`,
      `${base}:generateContent?alt=proto`,
    ]) {
      const res = await call(url, { headers: goog(KEY_A), body: geminiBody() })
      expect(res.status, url).toBe(400)
      expect(res.json).toEqual(googleError(400, 'INVALID_ARGUMENT'))
      expect(res.json.error.message).toContain('alt')
    }
    expect(fx.mock.requests).toHaveLength(0)
    const ok = await call(`${base}:generateContent?alt=json&prettyPrint=false&fields=candidates`, {
      headers: goog(KEY_A),
      body: geminiBody(),
    })
    expect(ok.status).toBe(200)
    // `fields` would have stripped usageMetadata upstream, and with it the usage the gateway reports.
    expect(ok.json.usageMetadata).toBeDefined()
    expect(fx.mock.requests.map((r) => r.path)).toEqual([`/v1beta/models/${MODEL}:generateContent`])
  })

  it.each(ENDPOINTS)('answers 404 NOT_FOUND on $method for a model that is not configured', async ({ stream }) => {
    fx.mock.resetRequests()
    // An upstream's own name for a model (`upstream-name`) and a differently cased id name nothing configured.
    for (const model of ['nope', 'upstream-name', 'GEMINI-2.5-FLASH', 'models']) {
      const res = await call(`${fx.url}${gpath(stream, model)}`, { headers: goog(KEY_A), body: geminiBody() })
      expect(res.status, model).toBe(404)
      expect(res.json).toEqual(googleError(404, 'NOT_FOUND'))
    }
    expect(fx.mock.requests).toHaveLength(0)
  })

  // google.rpc.Code has no name for 405: a verb the path does not take is a method that does not exist.
  it('answers 404 NOT_FOUND for a GET on a generate-content path, naming the method it takes', async () => {
    const res = await call(`${fx.url}${gpath(false)}`, { headers: goog(KEY_A) })
    expect(res.status).toBe(404)
    expect(res.headers.allow).toBe('POST')
    expect(res.json).toEqual(googleError(404, 'NOT_FOUND'))
    expect(res.json.error.message).toContain('use POST')
  })
})

describeMatrix('Gemini upstream failures', (kind) => {
  const fx = useFixture(kind, { timeouts: { upstreamMs: 300 } })

  it.each(ENDPOINTS)('answers 504 DEADLINE_EXCEEDED on $method when the upstream is slower than the timeout', async ({ stream }) => {
    const res = await call(`${fx.url}${gpath(stream)}`, { headers: goog(KEY_A), body: geminiBody('x', { mock: { hang: true } }) })
    expect(res.status).toBe(504)
    expect(res.json).toEqual(googleError(504, 'DEADLINE_EXCEEDED'))
  })

  it.each(ENDPOINTS)(
    'answers 503 UNAVAILABLE on $method when the upstream breaks the connection, naming neither its URL nor its key',
    async ({ stream }) => {
      const res = await call(`${fx.url}${gpath(stream)}`, { headers: goog(KEY_A), body: geminiBody('x', { mock: { destroy: true } }) })
      expect(res.status).toBe(503)
      expect(res.json).toEqual(googleError(503, 'UNAVAILABLE'))
      expect(res.text).not.toContain(fx.mock.url)
      expect(res.text).not.toContain(UPSTREAM_KEY)
    },
  )

  it('ends with one Google-shaped error event when the upstream stream breaks off after the headers', async () => {
    const res = await call(`${fx.url}${gpath(true)}`, {
      headers: goog(KEY_A),
      body: geminiBody('x', { mock: { chunks: 5, destroy_after_frames: 2 } }),
    })
    expect(res.status).toBe(200)
    const events = res.text.split(/\r?\n\r?\n/).filter((e) => e.startsWith('data:'))
    expect(JSON.parse((events.at(-1) as string).slice(5))).toEqual(googleError(503, 'UNAVAILABLE'))
    expect(events.filter((e) => e.includes('"error"'))).toHaveLength(1)
    await eventually(() => fx.logs.some((l) => l.message === 'model-gateway: upstream stream broke off'))
  })
})

describeMatrix('Gemini unreachable upstream', (kind) => {
  let fx: Fixture
  beforeAll(async () => {
    const port = await freePort()
    fx = await startFixture(kind, {
      upstreams: { dead: { type: 'gemini', baseUrl: `http://127.0.0.1:${port}`, apiKey: UPSTREAM_KEY } },
      models: [{ id: MODEL, upstream: 'dead' }],
    })
  })
  afterAll(() => fx.close())

  it.each(ENDPOINTS)('answers 503 UNAVAILABLE on $method when nothing listens upstream', async ({ stream }) => {
    const res = await call(`${fx.url}${gpath(stream)}`, { headers: goog(KEY_A), body: geminiBody() })
    expect(res.status).toBe(503)
    expect(res.json).toEqual(googleError(503, 'UNAVAILABLE'))
    expect(res.text).not.toContain('127.0.0.1')
  })
})
