import Keyv from 'keyv'
import { afterEach, describe, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
import { call } from '../support/http.js'
import { finalResponse, SocketClient } from '../support/socket-client.js'
import { type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// What a socket's turns cost the store, and what the store's pace costs them: each response is a background call
// whose state is written as it runs, so a client on the other side of a slow store must not wait for those writes.

let gw: SocketGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** A Map that records the name of each value written to it. */
class CountingMap extends Map<string, unknown> {
  readonly writes: string[] = []
  override set(key: string, value: unknown): this {
    this.writes?.push(key.replace(/^.*\}:/, ''))
    return super.set(key, value)
  }
}

/** A Keyv store over a Map whose writes take 20 ms to be acknowledged, as a Redis across a network does. */
function distantStore(): Keyv {
  const map = new Map<string, unknown>()
  const store = {
    opts: {},
    get: async (key: string) => map.get(key),
    set: async (key: string, value: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      map.set(key, value)
      return true
    },
    delete: async (key: string) => map.delete(key),
    clear: async () => map.clear(),
    has: async (key: string) => map.has(key),
    on: () => store,
  }
  return new Keyv({ store: store as never })
}

describe('a socket and its store', () => {
  it('writes four values for a short turn (its first state, and its last), one for the socket when it closes', async () => {
    const map = new CountingMap()
    gw = await startSocketGateway({ gateway: { store: new Keyv({ store: map }) } })
    const client = await SocketClient.open(gw.url, KEY_A)
    const warm = finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'be brief', generate: false }))
    expect(map.writes).toEqual([])
    let previous = warm.id
    const perTurn: string[][] = []
    for (let turn = 0; turn < 10; turn++) {
      const before = map.writes.length
      const frames = await client.create({ model: 'gpt-4o-mini', previous_response_id: previous, input: `turn ${turn}`, store: false })
      previous = finalResponse(frames).id
      // The last state is written once the last frame went: the next turn does not wait for it.
      await new Promise((resolve) => setTimeout(resolve, 30))
      perTurn.push(map.writes.slice(before))
    }
    const id = (name: string) => /^bg:([0-9A-Z]{26})/.exec(name)?.[1]
    // A head and a segment of events before the first frame, the same at the end, all of the turn's own response; a
    // turn that a loaded machine stretches past 100 ms writes a segment and a head more per 100 ms.
    expect(Math.min(...perTurn.map((writes) => writes.length))).toBe(4)
    for (const writes of perTurn) {
      expect(writes.length % 2).toBe(0)
      expect(new Set(writes.map(id)).size).toBe(1)
    }
    const before = map.writes.length
    await client.close()
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(map.writes.slice(before)).toEqual([expect.stringMatching(/^wsctx:/)])
    // An HTTP stream with no Idempotency-Key writes nothing.
    const http = map.writes.length
    const streamed = await call(`${gw.url}/v1/responses`, {
      headers: { authorization: `Bearer ${KEY_A}` },
      body: { model: 'gpt-4o-mini', input: 'hi', stream: true },
    })
    expect(streamed.status).toBe(200)
    expect(map.writes.length).toBe(http)
  })

  it('takes the next create as soon as the last frame went, not once the store acknowledged the last state', async () => {
    gw = await startSocketGateway({ gateway: { store: distantStore() } })
    const client = await SocketClient.open(gw.url, KEY_A)
    let previous: string | undefined
    for (let turn = 0; turn < 5; turn++) {
      // Sent the moment the previous `response.completed` was read, as a client whose tool ran at once does.
      const frames = await client.create({ model: 'gpt-4o-mini', previous_response_id: previous, input: `turn ${turn}`, store: false })
      expect(frames.at(-1)).toMatchObject({ type: 'response.completed' })
      previous = finalResponse(frames).id
    }
    await client.close()
  })
})
