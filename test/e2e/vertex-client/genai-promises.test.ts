import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { cutAfterEvents, sseEvents } from '../../support/sse-client.js'
import { genaiVertex, MODELS, PROJECT, startVertexClientFixture, type VertexClientFixture } from './support.js'

// The gateway's promises on Vertex AI's Gemini routes (`@google/genai` in Vertex mode): joined repeats, a cut stream
// kept and resumed, and owner limits and cost, with the errors in Google's shape.

let fx: VertexClientFixture
beforeAll(async () => {
  fx = await startVertexClientFixture({
    recovery: { streams: 'finish' },
    limits: { owners: { requestsPerMinute: 1000 } },
    pricing: { [MODELS.gemini]: { input: 1, output: 1 }, [MODELS.vertexGemini]: { input: 1, output: 1 } },
  })
})
afterAll(() => fx.close())

const GOOGLE = `/v1beta1/projects/${PROJECT}/locations/us-central1/publishers/google/models`
const dataOf = (text: string) => sseEvents(text).filter((event) => event.startsWith('data:'))
const upstreamCalls = (marker: string) => fx.mock.requests.filter((request) => request.body.includes(marker))

describe('@google/genai in Vertex mode: repeats joined', () => {
  it('two calls with one Idempotency-Key (the SDK’s headers) while the first runs: one upstream call, one answer', async () => {
    const marker = 'genai joined repeat'
    fx.mock.steer(marker, { delay_ms: 400 })
    const client = genaiVertex(fx.url, { headers: { 'idempotency-key': 'genai-vertex-1' } })
    const first = client.models.generateContent({ model: MODELS.vertexGemini, contents: marker })
    await eventually(() => upstreamCalls(marker).length === 1)
    const [a, b] = await Promise.all([first, client.models.generateContent({ model: MODELS.vertexGemini, contents: marker })])
    fx.mock.steer(marker, undefined)
    expect(b.text).toBe(a.text)
    expect(a.text).toBe(`Echo: ${marker}`)
    expect(upstreamCalls(marker)).toHaveLength(1)
  })
})

describe('a cut stream of the Gemini route, kept and resumed', () => {
  it('runs to its end; its record (endpoint generateContent) is found; resumed after data event 2 the parts make the whole', async () => {
    const marker = 'genai vertex resume'
    const body = { contents: [{ role: 'user', parts: [{ text: marker }] }] }
    fx.mock.steer(marker, { chunks: 8, chunk_delay_ms: 40 })
    const url = `${fx.url}${GOOGLE}/${MODELS.gemini}:streamGenerateContent?alt=sse`
    const cut = await cutAfterEvents(url, { 'x-goog-api-key': KEY_A }, body, 2)
    expect(cut.status).toBe(200)
    expect(dataOf(cut.received)).toHaveLength(2)
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? res.json : undefined
    })
    fx.mock.steer(marker, undefined)
    expect(record.request.endpoint).toBe('generateContent')
    const rest = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, {
      headers: { 'x-goog-api-key': KEY_A, 'last-event-id': '2' },
    })
    expect(rest.status).toBe(200)
    // Each event's number rides in an event of its own after it (the Google SDKs skip it): the data events add up.
    expect([...dataOf(cut.received), ...dataOf(rest.text)]).toEqual(dataOf(record.response.stream_raw))
    expect(dataOf(rest.text).length).toBeGreaterThan(2)
    expect(upstreamCalls(marker)).toHaveLength(1)
  })
})

describe('limits and cost', () => {
  it('a call is priced and metered under its owner, with the route’s operation', async () => {
    const before = fx.usage.length
    await genaiVertex(fx.url).models.generateContent({ model: MODELS.gemini, contents: 'priced vertex call' })
    await eventually(() => fx.usage.length > before)
    const [event] = fx.usage.slice(before)
    expect(event).toMatchObject({ endpoint: 'generateContent', model: MODELS.gemini, upstream: 'gem' })
    expect(event!.cost).toBeGreaterThan(0)
  })

  it('over its owner’s limit a call is refused before any upstream call: 429 RESOURCE_EXHAUSTED on both publishers', async () => {
    const limited = await startVertexClientFixture({ limits: { owners: { requestsPerMinute: 1 } } })
    try {
      const anthropicAt = `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models`
      const claude = { anthropic_version: 'vertex-2023-10-16', max_tokens: 8, messages: [{ role: 'user', content: 'limited' }] }
      const ok = await call(`${limited.url}${anthropicAt}/${MODELS.anthropic}:rawPredict`, {
        headers: { 'x-api-key': KEY_A },
        body: claude,
      })
      expect(ok.status).toBe(200)
      const before = limited.mock.requests.length
      for (const [path, body] of [
        [`${anthropicAt}/${MODELS.anthropic}:rawPredict`, claude],
        [`${GOOGLE}/${MODELS.gemini}:generateContent`, { contents: [{ role: 'user', parts: [{ text: 'limited' }] }] }],
      ] as const) {
        const refused = await call(`${limited.url}${path}`, { headers: { 'x-api-key': KEY_A }, body })
        expect(refused.status).toBe(429)
        expect(refused.json).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } })
      }
      expect(limited.mock.requests.length).toBe(before)
    } finally {
      await limited.close()
    }
  })
})
