import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'

import { serve } from '../support/servers.js'

// A background create with megabytes of instructions, in the in-memory store: its object is kept once, not a copy
// per 100 ms update, so memory stays flat while its events flow.

const MB = 1000 * 1000
const MiB = 1024 * 1024

let mock: MockUpstream
let gateway: Gateway
let server: MountedServer
beforeAll(async () => {
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
  gateway = createGateway({
    upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
    models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
    auth: { apiKeys: [KEY_A] },
  })
  server = await serve(nodeHandler(gateway))
})
afterAll(async () => {
  await server.close()
  await gateway.close()
  await mock.close()
})

it('memory in use while the events of a create with 10 MB of instructions flow stays near flat', async () => {
  mock.steer('bg large create', { chunks: 60, chunk_delay_ms: 50 })
  const body = JSON.stringify({ model: 'gpt-4o-mini', input: 'bg large create', background: true, instructions: 'i'.repeat(10 * MB) })
  const res = await call(`${server.url}/v1/responses`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
  expect(res.status).toBe(200)
  const id = (res.json as { id: string }).id
  await sleep(500)
  // One second of events, a head written every 100 ms, measured from a point where the call already runs: the most
  // memory in use above where it started (garbage included, as RSS counts it).
  const base = process.memoryUsage()
  let peak = 0
  const sample = setInterval(() => {
    const now = process.memoryUsage()
    peak = Math.max(peak, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers)
  }, 5)
  await sleep(1000)
  clearInterval(sample)
  console.log('background-large-create: peak growth while events flow, MiB', (peak / MiB).toFixed(1))
  await eventually(
    async () => (await call(`${server.url}/v1/responses/${id}`, { headers: bearer(KEY_A) })).json?.status === 'completed',
    30_000,
  )
  // A head with the object rewritten every 100 ms made ten 10 MB strings a second.
  expect(peak).toBeLessThan(20 * MiB)
}, 60_000)
