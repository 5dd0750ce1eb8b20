import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { VERCEL_ANTHROPIC_LEGS, CLAUDE_MODEL as VERCEL_MODEL } from '../support/anthropic-sdks.js'
import { upstreamsOnOneMock } from '../support/every-dialect.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// What Anthropic's API says and the gateway must say as it does to Anthropic clients, whichever upstream answers:
// the token limits and release time of a model, a 429's `retry-after`, the request id of an error, `max_tokens: 0`.

const HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const CLAUDE = 'claude-sonnet-4-5'
/** A Claude model with nothing configured but its upstream: its limits and release time unknown. */
const BARE = 'claude-bare'

let mock: MockUpstream
let gw: { url: string; close(): Promise<void> }

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: upstreamsOnOneMock(mock.url, UPSTREAM_KEY),
    models: [
      { id: CLAUDE, upstream: 'anthropic', created: 1760486400, contextWindow: 200_000, maxOutputTokens: 64_000 },
      { id: BARE, upstream: 'anthropic' },
      { id: 'gpt-4o-mini', upstream: 'openai', contextWindow: 128_000 },
      { id: 'gemini-2.5-flash', upstream: 'gemini' },
      // The Claude model the Vercel legs ask for, served by the OpenAI side: its answers are translated.
      { id: VERCEL_MODEL, upstream: 'openai', upstreamModel: 'gpt-4o-mini' },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { warn() {}, error() {} },
  })
  const server = await (NODE_KINDS[0] as (typeof NODE_KINDS)[number]).mount(gateway)
  gw = {
    url: server.url,
    async close() {
      await server.close()
      await gateway.close()
    },
  }
})
afterAll(async () => {
  await gw.close()
  await mock.close()
})

describe('Anthropic fidelity', () => {
  it('a model object carries its token limits and release time, null and the epoch where they are not configured', async () => {
    const sdk = new Anthropic({ apiKey: KEY_A, baseURL: gw.url, maxRetries: 0 })
    expect(await sdk.models.retrieve(CLAUDE)).toMatchObject({
      id: CLAUDE,
      created_at: '2025-10-15T00:00:00.000Z',
      max_input_tokens: 200_000,
      max_tokens: 64_000,
      capabilities: null,
      lifecycle: 'active',
    })
    expect(await sdk.models.retrieve(BARE)).toMatchObject({
      created_at: '1970-01-01T00:00:00.000Z',
      max_input_tokens: null,
      max_tokens: null,
    })
    // Google's clients are told the context window as Google says it.
    const google = await call(`${gw.url}/v1beta/models/gpt-4o-mini`, { headers: { 'x-goog-api-key': KEY_A } })
    expect(google.json).toMatchObject({ inputTokenLimit: 128_000 })
    expect(google.json).not.toHaveProperty('outputTokenLimit')
  })

  it('max_tokens: 0 is taken, as the API takes it to warm the prompt cache: nothing is generated', async () => {
    const res = await call(`${gw.url}/v1/messages`, {
      headers: HEADERS,
      body: { model: CLAUDE, max_tokens: 0, messages: [{ role: 'user', content: 'warm the cache' }] },
    })
    expect(res.status, res.text).toBe(200)
    expect(res.json).toMatchObject({ content: [], stop_reason: 'max_tokens' })
  })

  it('a 429 of an OpenAI or Gemini upstream reaches an Anthropic client with retry-after, its error with the request id of its header', async () => {
    const marker = 'fidelity 429'
    try {
      mock.steer(marker, { status: 429 })
      const res = await call(`${gw.url}/v1/messages`, {
        headers: HEADERS,
        body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: marker }] },
      })
      expect(res.status).toBe(429)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' }, request_id: res.headers['request-id'] })
      // The wait the upstream asked for in milliseconds, in whole seconds rounded up.
      mock.steer(marker, { status: 429, headers: { 'retry-after-ms': '2500' } })
      const asked = await call(`${gw.url}/v1/messages`, {
        headers: HEADERS,
        body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: marker }] },
      })
      expect(asked.headers['retry-after']).toBe('3')
      // Gemini says the wait in its error body's RetryInfo.
      const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }
      const quota = { error: { code: 429, message: 'Quota exceeded.', status: 'RESOURCE_EXHAUSTED', details: [retryInfo] } }
      mock.steer(marker, { status: 429, error_body: quota })
      const gemini = await call(`${gw.url}/v1/messages`, {
        headers: HEADERS,
        body: { model: 'gemini-2.5-flash', max_tokens: 16, messages: [{ role: 'user', content: marker }] },
      })
      expect(gemini.status).toBe(429)
      expect(gemini.headers['retry-after']).toBe('37')
      expect(gemini.json).toMatchObject({ error: { type: 'rate_limit_error', message: 'Quota exceeded.' } })
      // An OpenAI client is told what its upstream said: no wait the upstream did not ask for.
      mock.steer(marker, { status: 429 })
      const openai = await call(`${gw.url}/v1/chat/completions`, {
        headers: { authorization: `Bearer ${KEY_A}` },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: marker }] },
      })
      expect(openai.status).toBe(429)
      expect(openai.headers['retry-after']).toBeUndefined()
    } finally {
      mock.steer(marker, undefined)
    }
  })

  // The SDK's types require a text block's `citations` (nullable); `@ai-sdk/anthropic` 3 refuses `citations: null`.
  it.each(VERCEL_ANTHROPIC_LEGS)('$name reads a translated message and stream: its text blocks carry no citations: null', async (leg) => {
    const target = { base: gw.url, apiKey: KEY_A }
    expect(await leg.generate(target, 'vercel translated')).toMatchObject({ text: 'Echo: vercel translated', finishReason: 'stop' })
    expect(await leg.stream(target, 'vercel translated')).toMatchObject({ text: 'Echo: vercel translated', finishReason: 'stop' })
  })
})
