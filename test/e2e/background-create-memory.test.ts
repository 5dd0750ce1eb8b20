import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'
import { heldGrowth } from '../support/peak-memory.js'
import { serve } from '../support/servers.js'

// What a background create with megabytes of instructions keeps once it answered, in the gateway alone: its
// upstream here reads each request to its end, keeping none of it, and answers only when told to, so what the
// process holds is the gateway's.

const MB = 1000 * 1000

/** Upstream answers waiting to be given. */
const waiting: ServerResponse[] = []
let upstream: MountedServer
let gateway: Gateway
let server: MountedServer

beforeAll(async () => {
  upstream = await serve((req, res) => {
    req.resume()
    req.once('end', () => waiting.push(res))
  })
  gateway = createGateway({
    upstreams: { m: { type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-upstream' } },
    models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
    auth: { apiKeys: [KEY_A] },
  })
  server = await serve(nodeHandler(gateway))
})

afterAll(async () => {
  await server?.close()
  await gateway?.close()
  await upstream?.close()
})

/** Ends every waiting upstream request with a 503: their calls end `failed`. */
function answerAll(): void {
  for (const res of waiting.splice(0)) res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}')
}

it('once a create with 10 MB of instructions is answered, it holds them three times, not the body they came in', async () => {
  // Bytes made before the measure: the client may keep what it sent a while after the answer.
  const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', input: 'Hello', background: true, instructions: 'h'.repeat(10 * MB) }))
  const url = `${server.url}/v1/responses`
  const held = await heldGrowth(async () => {
    const res = await call(url, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    // Measured once the upstream has the whole request: what is held then is what the call holds while it runs.
    await eventually(async () => waiting.length === 1, 30_000)
    return (res.json as { id: string }).id
  })
  // Held while the call waits on its upstream: its object and the created event that echoes it (kept for replay), in
  // the heap, and the body sent upstream (undici keeps it until the upstream answered): 3.1 copies measured. The body
  // the create came in was held too, by the request's listeners through their settled read: its joined bytes and
  // its chunks, two copies more (5.1 measured).
  const bytes = held.arrayBuffers / (10 * MB)
  const copies = (held.heap + held.arrayBuffers) / (10 * MB)
  console.log('background-create-memory: copies held once the create answered', copies.toFixed(2), 'of them bytes', bytes.toFixed(2))
  answerAll()
  expect(bytes).toBeLessThan(1.5)
  expect(copies).toBeLessThan(3.5)
  await eventually(async () => (await call(`${url}/${held.result}`, { headers: bearer(KEY_A) })).json?.status === 'failed', 30_000)
}, 60_000)
