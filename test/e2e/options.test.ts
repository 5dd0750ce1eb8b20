import http from 'node:http'
import { describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { startMockUpstream } from '../support/mock-upstream/index.mjs'
import { createGateway } from '../../src/gateway.js'

// The one options case that can only be seen through a running gateway: where a call really goes.
describe('createGateway options', () => {
  it('accepts a Gemini base URL copied with its /v1beta suffix and does not double it', async () => {
    const mock = await startMockUpstream()
    const gateway = createGateway({
      upstreams: { g: { type: 'gemini', baseUrl: `${mock.url}/v1beta/` } },
      models: [{ id: 'gemini-2.5-flash', upstream: 'g' }],
      auth: { apiKeys: ['sk-1'] },
    })
    const server = http.createServer(nodeHandler(gateway)).listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const { port } = server.address() as { port: number }
      const res = await fetch(`http://127.0.0.1:${port}/v1beta/models/gemini-2.5-flash:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': 'sk-1', 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
      })
      expect(res.status).toBe(200)
      expect(mock.requests[0]?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    } finally {
      server.closeAllConnections()
      server.close()
      await gateway.close()
      await mock.close()
    }
  })
})
