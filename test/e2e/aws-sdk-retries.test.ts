import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

// The AWS SDKs mark their retries with `amz-sdk-request: attempt=N; max=M` and send one `amz-sdk-invocation-id` with
// every attempt of a call: raw requests with those headers, on Anthropic Messages, are joined as the Stainless SDKs'
// retries are, and only to the attempts of their own invocation.

const CLAUDE_MODEL = 'claude-sonnet-4-5'
const MESSAGES = '/v1/messages'
const CLAUDE = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const INVOCATION = '3b0c6a52-9d1e-4f7a-8c2b-5e6f7a8b9c0d'
const OTHER_INVOCATION = 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f'

let mock: MockUpstream
let server: MountedServer
let close: () => Promise<void>
beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: { claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY, headers: { 'anthropic-version': '2023-06-01' } } },
    models: [{ id: CLAUDE_MODEL, upstream: 'claude' }],
    auth: { apiKeys: [KEY_A] },
    logger: { warn() {}, error() {} },
  })
  server = await NODE_KINDS[0]!.mount(gateway)
  close = async () => {
    await server.close()
    await gateway.close()
    await mock.close()
  }
})
afterAll(() => close())

const body = (text: string, delayMs: number) => ({
  model: CLAUDE_MODEL,
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
  mock: { delay_ms: delayMs },
})
const aws = (attempt: number, invocation: string | undefined) => ({
  ...CLAUDE,
  'amz-sdk-request': `attempt=${attempt}; max=3`,
  ...(invocation === undefined ? {} : { 'amz-sdk-invocation-id': invocation }),
})
const upstreamCalls = (marker: string) => mock.requests.filter((r) => r.body.includes(marker)).length

describe('AWS SDK retry markers on /v1/messages', () => {
  it('attempt=2 after a cut first attempt of the same invocation joins it: one upstream call', async () => {
    const sent = body('aws retry after a cut', 400)
    await sendThenAbort(`${server.url}${MESSAGES}`, { headers: aws(1, INVOCATION), body: JSON.stringify(sent), afterMs: 30 })
    await eventually(() => upstreamCalls('aws retry after a cut') === 1)
    const retry = await call(`${server.url}${MESSAGES}`, { headers: aws(2, INVOCATION), body: sent })
    expect(retry.status).toBe(200)
    expect(retry.json.type).toBe('message')
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('aws retry after a cut')).toBe(1)
  })

  it('attempt=2 of another invocation with the same body is another call, never joined', async () => {
    const sent = body('aws other invocation', 300)
    const first = call(`${server.url}${MESSAGES}`, { headers: aws(1, INVOCATION), body: sent })
    await eventually(() => upstreamCalls('aws other invocation') === 1)
    const other = await call(`${server.url}${MESSAGES}`, { headers: aws(2, OTHER_INVOCATION), body: sent })
    expect((await first).status).toBe(200)
    expect(other.status).toBe(200)
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('aws other invocation')).toBe(2)
  })

  it('a delivered answer is served again to a retry of its own invocation only', async () => {
    const sent = body('aws recent answer', 0)
    const first = await call(`${server.url}${MESSAGES}`, { headers: aws(1, INVOCATION), body: sent })
    const own = await call(`${server.url}${MESSAGES}`, { headers: aws(3, INVOCATION), body: sent })
    expect(own.text).toBe(first.text)
    expect(own.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('aws recent answer')).toBe(1)
    const other = await call(`${server.url}${MESSAGES}`, { headers: aws(2, OTHER_INVOCATION), body: sent })
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('aws recent answer')).toBe(2)
  })

  it('attempt=2 without an invocation id joins by body, as a Stainless retry does', async () => {
    const sent = body('aws no invocation', 300)
    const first = call(`${server.url}${MESSAGES}`, { headers: aws(1, undefined), body: sent })
    await eventually(() => upstreamCalls('aws no invocation') === 1)
    const [a, b] = await Promise.all([first, call(`${server.url}${MESSAGES}`, { headers: aws(2, undefined), body: sent })])
    expect(b.text).toBe(a.text)
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('aws no invocation')).toBe(1)
  })

  it('attempt=1 twice is two calls: a first try is never a retry', async () => {
    const sent = body('aws first tries', 0)
    await call(`${server.url}${MESSAGES}`, { headers: aws(1, INVOCATION), body: sent })
    const again = await call(`${server.url}${MESSAGES}`, { headers: aws(1, INVOCATION), body: sent })
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('aws first tries')).toBe(2)
  })
})
