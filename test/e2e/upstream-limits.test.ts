import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'

/** An upstream answering `size` bytes: JSON for generate/chat calls, SSE for streams; status from the model name. */
async function bigUpstream(size: number) {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url?.includes('alt=sse') || req.headers.accept === 'text/event-stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        for (let sent = 0; sent < size; sent += 100) res.write(`data: ${JSON.stringify({ x: 'y'.repeat(80) })}\n\n`)
        res.end()
        return
      }
      const status = req.url?.includes('fails') ? 500 : 200
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ pad: 'p'.repeat(size) }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const LIMIT = 4096
let up: Awaited<ReturnType<typeof bigUpstream>>
let gw: { server: http.Server; url: string; close: () => Promise<void> }

beforeAll(async () => {
  up = await bigUpstream(8192)
  const gateway = createGateway({
    upstreams: { o: { type: 'openai', baseUrl: `${up.url}/v1` }, g: { type: 'gemini', baseUrl: up.url } },
    models: [
      { id: 'chat', upstream: 'o' },
      { id: 'gen', upstream: 'g' },
      { id: 'gen-fails', upstream: 'g' },
    ],
    auth: { apiKeys: ['sk-1'] },
    limits: { maxResponseBytes: LIMIT },
  })
  const server = http.createServer(nodeHandler(gateway))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  gw = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => gateway.close() }
})
afterAll(async () => {
  gw.server.closeAllConnections()
  gw.server.close()
  await gw.close()
  up.server.close()
})

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

describe('limits.maxResponseBytes', () => {
  it('answers 502 upstream_response_too_large for a chat answer over the limit', async () => {
    const res = await post(
      '/v1/chat/completions',
      { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: 'Bearer sk-1' },
    )
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({
      error: {
        message: `The upstream response is larger than the limit of ${LIMIT} bytes.`,
        type: 'api_error',
        param: null,
        code: 'upstream_response_too_large',
      },
    })
  })

  it('bounds upstream error bodies too, answering in Google’s shape on generate-content', async () => {
    for (const model of ['gen', 'gen-fails']) {
      const res = await post(
        `/v1beta/models/${model}:generateContent`,
        { contents: [{ parts: [{ text: 'hi' }] }] },
        { 'x-goog-api-key': 'sk-1' },
      )
      expect(res.status).toBe(502)
      expect(await res.json()).toEqual({
        error: { code: 502, message: `The upstream response is larger than the limit of ${LIMIT} bytes.`, status: 'UNAVAILABLE' },
      })
    }
  })

  it('leaves streams alone: they are relayed, never held whole', async () => {
    const res = await post(
      '/v1/chat/completions',
      { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: 'Bearer sk-1' },
    )
    expect(res.status).toBe(200)
    expect((await res.text()).length).toBeGreaterThan(LIMIT)
  })
})
