import { describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { startMockUpstream } from '../../src/testing/index.js'
import { call } from '../support/http.js'
import { serve } from '../support/servers.js'

// The one options case that can only be seen through a running gateway: where a call really goes.
describe('createGateway options', () => {
  it('accepts a Gemini base URL copied with its /v1beta suffix and does not double it', async () => {
    const mock = await startMockUpstream()
    const gateway = createGateway({
      upstreams: { g: { type: 'gemini', baseUrl: `${mock.url}/v1beta/` } },
      models: [{ id: 'gemini-2.5-flash', upstream: 'g' }],
      auth: { apiKeys: ['sk-1'] },
    })
    const server = await serve(nodeHandler(gateway))
    try {
      const res = await call(`${server.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
        headers: { 'x-goog-api-key': 'sk-1' },
        body: { contents: [{ parts: [{ text: 'hi' }] }] },
      })
      expect(res.status).toBe(200)
      expect(mock.requests[0]?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    } finally {
      await server.close()
      await gateway.close()
      await mock.close()
    }
  })
})
