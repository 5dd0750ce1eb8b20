import http from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, listen, type MountedServer } from '../support/http.js'

// An access logger reads the answer's head from `res` once it is sent (`res.getHeader`, as morgan's `:res[...]` and
// pino-http's serializer do): a whole answer's length and type are there, set by the gateway, not only on the wire.

let mock: MockUpstream
let gateway: Gateway
let server: MountedServer
const logged: Array<Record<string, unknown>> = []

beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  gateway = createGateway({
    auth: { apiKeys: [KEY_A] },
    upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  })
  const handle = nodeHandler(gateway)
  server = await listen(
    http.createServer((req, res) => {
      res.once('finish', () =>
        logged.push({
          length: res.getHeader('content-length'),
          type: res.getHeader('content-type'),
          id: res.getHeader('x-request-id'),
        }),
      )
      handle(req, res)
    }),
  )
})

afterAll(async () => {
  await server.close()
  await gateway.close()
  await mock.close()
})

it("a whole answer's head, read from res by a logger once sent, holds its length, type and request id", async () => {
  const res = await call(`${server.url}/v1/chat/completions`, {
    headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
    body: chatBody(),
  })
  expect(res.status).toBe(200)
  expect(logged).toHaveLength(1)
  expect(logged[0]).toEqual({
    length: Buffer.byteLength(res.text),
    type: 'application/json',
    id: res.headers['x-request-id'],
  })
})
