import { describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../src/json/hash.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { useScriptedGateway } from '../support/scripted-gateway.js'

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
  const sg = useScriptedGateway()

  it('looks up a 60 MB body of small objects while other requests are answered within 200 ms', async () => {
    const body = manySmallObjects(800_000, { lookup: true })
    const lookup = call(`${sg.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    const slowest = await slowestProbe(sg.url, lookup)
    expect((await lookup).status).toBe(200)
    expect(slowest).toBeLessThan(200)
  })

  it('keeps a 30 MB interrupted call, hashed off the loop, and finds it by lookup', async () => {
    const body = manySmallObjects(400_000, { keep: true })
    sg.upstream.script([Buffer.from('{"id":"c","object":"chat.completion","choices":[]}')], {
      contentType: 'application/json',
      gated: true,
    })
    await sendThenAbort(`${sg.url}/v1/chat/completions`, { headers: bearer(KEY_A), body, afterMs: 50 })
    await eventually(() => sg.upstream.requests.length === 1, 10_000)
    sg.upstream.release()
    const kept = eventually(async () => {
      const list = (await call(`${sg.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return list.count === 1 ? list : undefined
    }, 10_000)
    const slowest = await slowestProbe(sg.url, kept)
    expect(slowest).toBeLessThan(200)
    expect((await kept).items[0].request_body_hash).toBe(requestBodyHash(body))
  })
})
