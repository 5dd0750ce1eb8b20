import { randomUUID } from 'node:crypto'
import { createKeyv } from '@keyv/redis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { ownerId } from '../../src/index.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'
import { describeWithRedis, REDIS_URL } from '../support/redis.js'
import { serve } from '../support/servers.js'

// The console of two gateway processes sharing one Redis: the per-day usage one counts the other shows, today's cost
// is the ledger's (`gateway.usage`), and owners come from `authenticate` as well as from a key list.

await describeWithRedis('the console on Redis, two gateways', () => {
  const namespace = `console-e2e-${randomUUID()}`
  let mock: MockUpstream
  const gateways: Gateway[] = []
  const servers: MountedServer[] = []

  function options(): GatewayOptions {
    return {
      upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY } },
      models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
      // The host's own check: an owner named by the host, not a key list.
      auth: { authenticate: (key) => (key === KEY_A ? { owner: 'team-a' } : null) },
      store: createKeyv(REDIS_URL, { namespace }),
      pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
      limits: { owners: { costPerDay: 5 } },
      console: {},
      logger: { warn() {}, error: (...line: unknown[]) => console.error(...line) },
    }
  }

  beforeAll(async () => {
    mock = await startMockUpstream()
    for (let i = 0; i < 2; i++) {
      const gateway = createGateway(options())
      await gateway.ready()
      gateways.push(gateway)
      servers.push(await serve(nodeHandler(gateway)))
    }
  })
  afterAll(async () => {
    for (const server of servers) await server.close()
    for (const gateway of gateways) await gateway.close()
    await mock.close()
  })

  it("shows on one gateway the usage counted by the other, today's cost being gateway.usage's", async () => {
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }
    const [one, two] = servers as [MountedServer, MountedServer]
    for (const server of [one, two, two]) {
      expect((await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chat })).status).toBe(200)
    }
    const owner = ownerId({ owner: 'team-a' })
    const session = await call(`${one.url}/console/api/session`, { headers: bearer(KEY_A) })
    expect(session.json.owner).toBe(owner)
    // The ledger holds a process's charges up to 20 ms to send them with its next check: the page's figures and
    // gateway.usage agree once every charge is sent (read apart, one may count a charge the other does not yet).
    const { usage, windows } = await eventually(async () => {
      const res = await call(`${one.url}/console/api/usage`, { headers: bearer(KEY_A) })
      const now = await (gateways[0] as Gateway).usage(owner)
      const agree = res.json.today.requests === 3 && res.json.today.cost === now.cost && res.json.windows.cost === now.cost
      return agree ? { usage: res.json, windows: now } : undefined
    })
    expect(windows.cost).toBeGreaterThan(0)
    expect(usage.windows.cost).toBe(windows.cost)
    expect((await call(`${two.url}/console/api/usage`, { headers: bearer(KEY_A) })).json.today).toEqual(usage.today)
  })
})
