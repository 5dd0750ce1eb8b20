import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import { requestBodyHash } from '../../src/json/hash.js'
import type { Gateway } from '../../src/types.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { serve } from '../support/servers.js'

/** The slowest answer to a probe sent every 20 ms while `work` runs: how long the gateway's loop was blocked. */
async function slowestProbe(url: string, work: Promise<unknown>): Promise<number> {
  let done = false
  let slowest = 0
  const probing = (async () => {
    while (!done) {
      const started = performance.now()
      await call(`${url}/v1/models`)
      slowest = Math.max(slowest, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  await work
  done = true
  await probing
  return slowest
}

/** Small objects (about 75 bytes each): the body shape that is slowest to parse and hash. */
function manySmallObjects(count: number, extra: Record<string, unknown>): string {
  const messages = Array.from({ length: count }, (_, i) => ({ role: 'user', content: `m${i % 97}`, n: i }))
  return JSON.stringify({ model: 'gpt-4o-mini', ...extra, messages })
}

describe('large bodies never stall the event loop', () => {
  let upstream: ScriptedUpstream
  let gateway: Gateway
  let server: MountedServer
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    gateway = createGateway({
      upstreams: { s: { type: 'openai', baseUrl: `${upstream.url}/v1` } },
      models: [{ id: 'gpt-4o-mini', upstream: 's' }],
      auth: { apiKeys: [KEY_A] },
    })
    server = await serve(nodeHandler(gateway))
  })
  afterAll(async () => {
    await server.close()
    await gateway.close()
    await upstream.close()
  })

  it('looks up a 60 MB body of small objects while other requests are answered within 200 ms', async () => {
    const body = manySmallObjects(800_000, { lookup: true })
    const lookup = call(`${server.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    const slowest = await slowestProbe(server.url, lookup)
    expect((await lookup).status).toBe(200)
    expect(slowest).toBeLessThan(200)
  })

  it('keeps a 30 MB interrupted call, hashed off the loop, and finds it by lookup', async () => {
    const body = manySmallObjects(400_000, { keep: true })
    upstream.script([Buffer.from('{"id":"c","object":"chat.completion","choices":[]}')], { contentType: 'application/json', gated: true })
    await sendThenAbort(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body, afterMs: 50 })
    await eventually(() => upstream.requests.length === 1, 10_000)
    upstream.release()
    const kept = eventually(async () => {
      const list = (await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return list.count === 1 ? list : undefined
    }, 10_000)
    const slowest = await slowestProbe(server.url, kept)
    expect(slowest).toBeLessThan(200)
    expect((await kept).items[0].request_body_hash).toBe(requestBodyHash(body))
  })
})
