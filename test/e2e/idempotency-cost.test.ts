import { createClient } from '@keyv/redis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createGateway, type Gateway } from '../../src/gateway.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, type MountedServer } from '../support/http.js'
import {
  type AdminClient,
  describeWithRedis,
  gatewayCommandCalls,
  killAllOwnRedis,
  recommendedKeyv,
  startOwnRedis,
} from '../support/redis.js'
import { serve } from '../support/servers.js'

/** Commands the server ran since the last reset, by name, leaving out the ones this test sends itself. */
async function commandsRun(admin: AdminClient): Promise<Record<string, number>> {
  return Object.fromEntries(await gatewayCommandCalls(admin))
}

await describeWithRedis('What repeat protection costs in store commands', () => {
  let admin: AdminClient
  let mock: MockUpstream
  let gateway: Gateway
  let server: MountedServer

  beforeAll(async () => {
    const port = await freePort()
    await startOwnRedis(port)
    const url = `redis://127.0.0.1:${port}`
    admin = createClient({ url })
    admin.on('error', () => {})
    await admin.connect()
    mock = await startMockUpstream({ record: false })
    gateway = createGateway({
      upstreams: { m: { type: 'openai', baseUrl: `${mock.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 'm' }],
      auth: { apiKeys: [KEY_A] },
      store: recommendedKeyv('cost', url),
    })
    server = await serve(nodeHandler(gateway))
    // Connects the store, so the counts below hold only what the calls cost.
    expect((await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).status).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await gateway?.close()
    await mock?.close()
    admin?.destroy()
    await killAllOwnRedis()
  })

  const post = (content: string, headers: Record<string, string> = {}) =>
    call(`${server.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), ...headers }, body: chatBody(content) })

  it('a call with neither header, or an SDK first attempt, sends Redis nothing', async () => {
    await admin.configResetStat()
    for (let i = 0; i < 5; i++) expect((await post(`plain ${i}`)).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await post(`first attempt ${i}`, { 'x-stainless-retry-count': '0' })).status).toBe(200)
    expect(await commandsRun(admin)).toEqual({})
  })

  it('a keyed call sends one command before going upstream (the claim) and one after (the answer)', async () => {
    await admin.configResetStat()
    expect((await post('keyed cost', { 'idempotency-key': 'cost-1' })).status).toBe(200)
    expect(await commandsRun(admin)).toEqual({ set: 2 })
    await admin.configResetStat()
    const replay = await post('keyed cost', { 'idempotency-key': 'cost-1' })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    // A repeat: the refused claim, one read of the kept answer, and once it is delivered the note that the call's
    // answer was served again (for its recovery record's served_again_at).
    expect(await eventually(async () => ((await commandsRun(admin)).set === 2 ? commandsRun(admin) : undefined))).toEqual({
      set: 2,
      get: 1,
    })
  })
})
