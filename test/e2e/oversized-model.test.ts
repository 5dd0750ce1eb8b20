import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'

it('answers a megabyte chat body whose model name is 100 KB with a 400 on model, never a stand-in', async () => {
  const gateway = createGateway({
    upstreams: { o: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
    models: [{ id: 'm', upstream: 'o' }],
    auth: { apiKeys: ['sk-1'] },
  })
  const server = http.createServer(nodeHandler(gateway)).listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const body = JSON.stringify({ model: 'm'.repeat(100_000), messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] })
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-1', 'content-type': 'application/json' },
      body,
    })
    expect(res.status).toBe(400)
    const json = (await res.json()) as { error: { param: string; message: string } }
    expect(json.error.param).toBe('model')
    expect(json.error.message).toBe("'model' is longer than 65536 bytes.")
  } finally {
    server.close()
    await gateway.close()
  }
})
