import { APIError, AuthenticationError, BadRequestError, NotFoundError } from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../../src/json/hash.js'
import { bearer, KEY_A } from '../../support/fixture.js'
import { call, eventually, sendThenAbort } from '../../support/http.js'
import { cutAfterEvents, sseEvents } from '../../support/sse-client.js'
import { anthropicVertex, MODELS, PROJECT, startVertexClientFixture, type VertexClientFixture } from './support.js'

// The gateway's promises on Vertex AI's rawPredict routes: the caller's key, errors in the shape the Vertex clients
// read, records found by their body, SDK retries joined, Idempotency-Key, resume, usage events and CORS.

const APP = 'https://app.example.com'
let fx: VertexClientFixture
beforeAll(async () => {
  fx = await startVertexClientFixture({ cors: { origins: [APP] }, recovery: { streams: 'finish' } })
})
afterAll(() => fx.close())

const AT = `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models`
const rawPredict = (model: string, stream = false) => `${AT}/${model}:${stream ? 'streamRawPredict' : 'rawPredict'}`
const HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const vertexBody = (text: string, extra: object = {}) => ({
  anthropic_version: 'vertex-2023-10-16',
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
  ...extra,
})
const upstreamCalls = (marker: string) => fx.mock.requests.filter((request) => request.body.includes(marker))

describe('the caller’s key and the gateway’s errors (google.rpc status)', () => {
  it('no key: 401 UNAUTHENTICATED, raised by AnthropicVertex as an AuthenticationError', async () => {
    const error = await anthropicVertex(fx.url, { key: '' })
      .messages.create({ model: MODELS.anthropic, max_tokens: 8, messages: [{ role: 'user', content: 'no key' }] })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect((error as APIError).error).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED', message: expect.any(String) } })
    expect((error as APIError).apiMessage).toContain('x-api-key')
  })

  it.each([
    ['x-api-key', { 'x-api-key': KEY_A }],
    ['Authorization: Bearer', bearer(KEY_A)],
    ['x-goog-api-key', { 'x-goog-api-key': KEY_A }],
  ])('the key is read from %s', async (_name, headers) => {
    const res = await call(`${fx.url}${rawPredict(MODELS.anthropic)}`, { headers, body: vertexBody(`key in ${_name}`) })
    expect(res.status).toBe(200)
  })

  it.each([
    ['an Anthropic upstream', MODELS.anthropic, ['anthropic-beta', 'anthropic-version']],
    ['a Vertex AI Claude upstream (its version in the body)', MODELS.vertexClaude, ['anthropic-beta']],
  ])('anthropic-beta and anthropic-version go on to %s as an Anthropic client’s do', async (_name, model, forwarded) => {
    const marker = `forwarded headers ${model}`
    const headers = { ...HEADERS, 'anthropic-version': '2023-01-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' }
    const res = await call(`${fx.url}${rawPredict(model)}`, { headers, body: vertexBody(marker) })
    expect(res.status).toBe(200)
    const sent = upstreamCalls(marker).at(-1)!.headers
    for (const name of forwarded) expect(sent[name]).toBe(headers[name as keyof typeof headers])
  })

  it('an unknown model: 404 NOT_FOUND (NotFoundError), nothing sent upstream', async () => {
    const before = fx.mock.requests.length
    const error = await anthropicVertex(fx.url)
      .messages.create({ model: 'claude-nowhere', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as APIError).error).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
    expect(fx.mock.requests.length).toBe(before)
  })

  it.each([
    ['a traversal', `${AT}/../../../../v1/messages:rawPredict`],
    ['an encoded slash', `${AT}/claude-sonnet-4-5%2F..%2Fx:rawPredict`],
    ['an encoded @', `${AT}/claude-sonnet-4-5%4020250929:rawPredict`],
  ])('%s in the model path names no model: 404 in google.rpc shape', async (_name, path) => {
    const res = await call({ origin: fx.url, path }, { headers: HEADERS, body: vertexBody('path trick') })
    expect(res.status).toBe(404)
    expect(res.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
    expect(upstreamCalls('path trick')).toHaveLength(0)
  })

  it('`model` in a rawPredict body is the client’s 400 INVALID_ARGUMENT', async () => {
    const res = await call(`${fx.url}${rawPredict(MODELS.anthropic)}`, {
      headers: HEADERS,
      body: vertexBody('model in body', { model: 'claude-sonnet-4-5' }),
    })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining("'model'") } })
  })

  it('`stream: true` on :rawPredict is the client’s 400 (the route says whether it streams)', async () => {
    const res = await call(`${fx.url}${rawPredict(MODELS.anthropic)}`, {
      headers: HEADERS,
      body: vertexBody('stream mismatch', { stream: true }),
    })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain(':streamRawPredict')
  })

  it('a Claude upstream’s own error is relayed as it came (Anthropic’s shape, as Vertex AI relays it): the SDK reads its type', async () => {
    const error = await anthropicVertex(fx.url)
      .messages.create({
        model: MODELS.anthropic,
        max_tokens: 8,
        messages: [{ role: 'user', content: 'overloaded please' }],
        // @ts-expect-error steers the mock upstream
        mock: { status: 529 },
      })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(529)
    expect((error as APIError).type).toBe('overloaded_error')
  })

  it('a translated upstream’s error reaches the client in Anthropic’s shape too (the hub writes Messages errors)', async () => {
    fx.mock.steer('translated refusal', { status: 400 })
    const error = await anthropicVertex(fx.url)
      .messages.create({ model: MODELS.openai, max_tokens: 8, messages: [{ role: 'user', content: 'translated refusal' }] })
      .catch((caught: unknown) => caught)
    fx.mock.steer('translated refusal', undefined)
    expect(error).toBeInstanceOf(BadRequestError)
    expect((error as APIError).type).toBe('invalid_request_error')
  })
})

describe('records, retries, Idempotency-Key, resume', () => {
  it('a whole call its client left is kept, found by its body hash, its endpoint vertex.rawPredict', async () => {
    const body = vertexBody('vertex recover me', { mock: { delay_ms: 200 } })
    await sendThenAbort(`${fx.url}${rawPredict(MODELS.anthropic)}`, { headers: HEADERS, body: JSON.stringify(body), afterMs: 30 })
    const listed = await eventually(async () => {
      const list = await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
      return list.json.items?.find((item: { request_body_hash: string }) => item.request_body_hash === requestBodyHash(body))
    })
    const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body })
    expect(lookup.json).toEqual({ items: [listed] })
    const detail = await call(`${fx.url}/v1/recoveries/${listed.request_id}`, { headers: bearer(KEY_A) })
    expect(detail.json.request.endpoint).toBe('vertex.rawPredict')
    expect(JSON.parse(detail.json.response.body_raw)).toMatchObject({ type: 'message', content: [{ text: 'Echo: vertex recover me' }] })
  })

  it('a cut stream is resumed through /v1/recoveries/{id}/stream: the two parts make the whole stream', async () => {
    const body = vertexBody('vertex resume me', { mock: { chunks: 8, chunk_delay_ms: 40 } })
    const cut = await cutAfterEvents(`${fx.url}${rawPredict(MODELS.anthropic, true)}`, HEADERS, body, 3)
    expect(cut.status).toBe(200)
    expect(sseEvents(cut.received)).toHaveLength(3)
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? res.json : undefined
    })
    expect(record.request.endpoint).toBe('vertex.rawPredict')
    const rest = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...HEADERS, 'last-event-id': '3' } })
    expect(rest.status).toBe(200)
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    expect(rest.text).toMatch(/\nevent: message_stop\ndata: /)
  })

  it('AnthropicVertex timing out and retrying (x-stainless-retry-count) gets its answer from one upstream call, billed once', async () => {
    const before = fx.usage.length
    const message = await anthropicVertex(fx.url, { timeout: 1000, maxRetries: 2 }).messages.create({
      model: MODELS.anthropic,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'vertex sdk retry' }],
      // @ts-expect-error steers the mock upstream: it answers after 2.5 s, past the SDK's timeout
      mock: { delay_ms: 2500 },
    })
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: vertex sdk retry' }])
    expect(upstreamCalls('vertex sdk retry')).toHaveLength(1)
    await eventually(() => fx.usage.length > before)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(fx.usage.slice(before).map((usage) => usage.endpoint)).toEqual(['vertex.rawPredict'])
  })

  it('Idempotency-Key: a repeat is replayed from the kept answer, one upstream call', async () => {
    const headers = { ...HEADERS, 'idempotency-key': 'vertex-key-1' }
    const body = vertexBody('vertex idempotent')
    const first = await call(`${fx.url}${rawPredict(MODELS.vertexClaude)}`, { headers, body })
    const second = await call(`${fx.url}${rawPredict(MODELS.vertexClaude)}`, { headers, body })
    expect(second.status).toBe(200)
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('vertex idempotent')).toHaveLength(1)
  })
})

describe('a large rawPredict body (scanned, never parsed whole on the way in)', () => {
  it.each([
    ['an Anthropic upstream', MODELS.anthropic],
    ['a Vertex AI Claude upstream', MODELS.vertexClaude],
  ])('reaches %s whole, as the Messages body it stands for', async (_name, model) => {
    const marker = `large vertex body ${model}`
    const filler = 'y'.repeat(3 * 1024 * 1024)
    const message = await anthropicVertex(fx.url).messages.create({
      model,
      max_tokens: 16,
      messages: [
        { role: 'user', content: filler },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: marker },
      ],
    })
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${marker}` }])
    const sent = JSON.parse(upstreamCalls(marker).at(-1)!.body) as { messages: Array<{ content: string }>; model?: string }
    expect(sent.messages[0]!.content).toBe(filler)
    expect(sent.model).toBe(model === MODELS.anthropic ? 'claude-sonnet-4-5' : undefined)
  })
})

describe('CORS on the Vertex paths', () => {
  it('a preflight of a rawPredict call allows the Anthropic SDK’s headers and the key', async () => {
    const requested = 'anthropic-beta, anthropic-version, content-type, x-api-key, x-goog-api-key, x-stainless-retry-count'
    const res = await call(`${fx.url}${rawPredict(MODELS.anthropic, true)}`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': requested },
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(res.headers['access-control-allow-headers']).toBe(requested)
  })

  it('a call from the allowed origin is answered with its CORS headers', async () => {
    const res = await call(`${fx.url}${rawPredict(MODELS.anthropic)}`, {
      headers: { ...HEADERS, origin: APP },
      body: vertexBody('cors call'),
    })
    expect(res.status).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
  })
})
