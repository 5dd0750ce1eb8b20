import { afterAll, beforeAll, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { rawClient } from '../support/raw-client.js'
import { NODE_KINDS } from '../support/servers.js'

const MB = 1000 * 1000

let fx: Fixture
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!, { timeouts: { clientWriteMs: 200 }, recovery: { streams: 'finish' } })
})
afterAll(() => fx.close())

/**
 * A frozen client: it sends its request and reads only the head, then nothing, with its connection open. `thaw`
 * reads on, to see the end of what the gateway sent: a paused socket sees no close.
 */
async function frozenClient(body: unknown): Promise<{ requestId: string; thaw: () => Promise<void> }> {
  const client = rawClient(fx.url, '/v1/chat/completions', body, KEY_A)
  const requestId = await client.requestId()
  client.socket.pause()
  return {
    requestId,
    thaw: () => {
      client.socket.resume()
      return client.closed
    },
  }
}

const recordOf = (requestId: string) =>
  eventually(async () => {
    const res = await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })
    return res.status === 200 ? res.json : undefined
  }, 20_000)

it('cuts a frozen client of a 60 MB answer and keeps the answer as interrupted', async () => {
  const { requestId, thaw } = await frozenClient(chatBody('frozen', { mock: { content_bytes: 60 * MB } }))
  const record = await recordOf(requestId)
  expect(record.interrupted_reason).toBe('write failed: ETIMEDOUT')
  expect(record.response.response_body_size).toBeGreaterThan(60 * MB)
  // The gateway closed the connection: the client never did.
  await thaw()
})

it('cuts a frozen client of a stream that outlives it, and keeps the stream', async () => {
  const body = chatBody('frozen stream', { stream: true, mock: { content_bytes: 20 * MB, chunks: 200 } })
  const { requestId, thaw } = await frozenClient(body)
  const record = await recordOf(requestId)
  expect(record.interrupted_reason).toBe('write failed: ETIMEDOUT')
  expect(record.response.response_body_size).toBeGreaterThan(20 * MB)
  await thaw()
})

it('refuses a client write timeout or late-reset watch that is not a positive integer', () => {
  const options = (timeouts: Record<string, number>) => ({
    upstreams: { mock: { type: 'openai' as const, baseUrl: 'http://127.0.0.1:1/v1', keyless: true } },
    models: [{ id: 'm', upstream: 'mock' }],
    auth: { apiKeys: [KEY_A] },
    timeouts,
  })
  expect(() => createGateway(options({ clientWriteMs: 0 }))).toThrow(/timeouts\.clientWriteMs/)
  expect(() => createGateway(options({ lateResetMs: -1 }))).toThrow(/timeouts\.lateResetMs/)
})
