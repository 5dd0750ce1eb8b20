import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { callEnd, callsOnOneConnection, hasRecord, recordOf } from '../support/late-reset.js'
import { rawClient } from '../support/raw-client.js'
import { EXPRESS_KINDS, KOA_KINDS, NODE_KINDS } from '../support/servers.js'

const MB = 1000 * 1000

/**
 * A client that sends a chat call for an answer of `bytes`, reads at least `readBytes` of it, then resets the
 * connection: `after: 'finish'` reads on until the gateway has ended the call as delivered (what Node's `finish` made
 * of it: the rest sits in the sockets' buffers), `after: 'read'` resets at once, while the gateway still writes.
 */
async function readPartThenReset(url: string, bytes: number, readBytes: number, after: 'finish' | 'read' = 'finish'): Promise<string> {
  const client = rawClient(url, '/v1/chat/completions', chatBody(`late reset ${bytes}`, { mock: { content_bytes: bytes } }), KEY_A)
  const id = await client.requestId()
  await client.readAtLeast(readBytes)
  if (after === 'finish') expect((await callEnd(id)).delivered).toBe(true)
  client.socket.pause()
  client.socket.resetAndDestroy()
  await client.closed
  return id
}

describe.each([NODE_KINDS[0]!, EXPRESS_KINDS[0]!, KOA_KINDS[0]!])('a reset after the answer was handed on, $name', (kind) => {
  let fx: Fixture
  beforeAll(async () => {
    // A watch far longer than any test: what ends it here is the connection, never the clock.
    fx = await startFixture(kind, { timeouts: { lateResetMs: 600_000 } })
  })
  afterAll(() => fx.close())

  it.each([
    [0.5 * MB, 'finish'],
    [5 * MB, 'finish'],
    [60 * MB, 'finish'],
    [60 * MB, 'read'],
  ] as const)('keeps an answer of %d bytes whose client read 64 KB or more and reset after %s', async (bytes, after) => {
    const requestId = await readPartThenReset(fx.url, bytes, 64 * 1024, after)
    const record = await recordOf(fx, requestId)
    expect(record.interrupted_reason).toMatch(/^write failed: (ECONNRESET|EPIPE)$/)
    expect(record.response.response_body_size).toBeGreaterThan(bytes)
  })

  it('keeps a small answer whose client reset once it was handed on, as a client whose timeout fired then does', async () => {
    const requestId = await readPartThenReset(fx.url, 1000, 1)
    const record = await recordOf(fx, requestId)
    expect(record.interrupted_reason).toMatch(/^write failed: (ECONNRESET|EPIPE)$/)
  })

  it('watches one answer at a time per connection: many calls on one keep-alive connection gather no listeners', async () => {
    const { statuses, ids, warnings } = await callsOnOneConnection(fx, 40, false)
    expect(statuses.every((status) => status === 200)).toBe(true)
    // Each answer was read before the next request: none is kept, and the connection's listeners stayed few.
    expect(warnings).not.toContain('MaxListenersExceededWarning')
    for (const id of ids.slice(0, 3)) expect(await hasRecord(fx, id)).toBe(false)
  })

  it('keeps no record for a client that read everything and closed cleanly', async () => {
    const client = rawClient(fx.url, '/v1/chat/completions', chatBody('clean close', { mock: { content_bytes: 0.5 * MB } }), KEY_A)
    await client.readAtLeast(await client.firstLength())
    const requestId = await client.requestId()
    client.socket.end()
    await client.closed
    // A reset call after it, whose record is kept: by then the clean one's watch has long ended.
    await recordOf(fx, await readPartThenReset(fx.url, 0.5 * MB, 64 * 1024))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })

  it('keeps no record for an answer followed by another request on the same connection, then a reset', async () => {
    const client = rawClient(fx.url, '/v1/chat/completions', chatBody('reused', { mock: { content_bytes: 0.5 * MB } }), KEY_A)
    const first = await client.firstLength()
    await client.readAtLeast(first)
    const requestId = await client.requestId()
    client.send('/v1/models', undefined, KEY_A)
    await client.readAtLeast(first + 100)
    client.socket.resetAndDestroy()
    await client.closed
    await recordOf(fx, await readPartThenReset(fx.url, 0.5 * MB, 64 * 1024))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })
})

describe('an answer whose delivery cannot be confirmed', () => {
  let fx: Fixture
  beforeAll(async () => {
    fx = await startFixture(NODE_KINDS[0]!, { timeouts: { lateResetMs: 200 } })
  })
  afterAll(() => fx.close())

  it("says delivery 'unconfirmed' for a whole answer of 64 KiB or more, 'delivered' for a smaller one", async () => {
    const small = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('small answer', { mock: { content_bytes: 1000 } }),
    })
    const smallEnd = await callEnd(String(small.headers['x-request-id']))
    expect([smallEnd.delivered, smallEnd.delivery]).toEqual([true, 'delivered'])

    // Read in part: Node reports it sent, the rest sits in the sockets' buffers.
    const client = rawClient(fx.url, '/v1/chat/completions', chatBody('unconfirmed', { mock: { content_bytes: 2 * MB } }), KEY_A)
    const requestId = await client.requestId()
    await client.readAtLeast(64 * 1024)
    const end = await callEnd(requestId)
    expect([end.delivered, end.delivery]).toEqual([true, 'unconfirmed'])
    // A reset once the watch is over is not seen: nothing is kept, which is why the delivery was not called confirmed.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    client.socket.pause()
    client.socket.resetAndDestroy()
    await client.closed
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })
})
