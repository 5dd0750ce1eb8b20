import { Client } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { callEnd, callsOnOneConnection, hasRecord, recordOf } from '../support/late-reset.js'
import { type RawClient, rawClient } from '../support/raw-client.js'
import { EXPRESS_KINDS, KOA_KINDS, NODE_KINDS } from '../support/servers.js'

/** The text a raw client read, as it grows. */
function readText(client: RawClient): () => string {
  let text = ''
  client.socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
  })
  return () => text
}

/** Resolves once `check` holds of the text read, looked at after each read. */
const readUntil = (client: RawClient, check: () => boolean) =>
  new Promise<void>((resolve) => {
    if (check()) return resolve()
    const onData = () => {
      if (!check()) return
      client.socket.off('data', onData)
      resolve()
    }
    client.socket.on('data', onData)
  })

/**
 * A client that sends a streamed chat call and resets its connection once the gateway ended the call as delivered
 * (Node reported the last frame handed on): a client whose own timeout fired as the stream's end reached it.
 */
async function resetAtStreamEnd(url: string, content: string, headers: Record<string, string> = {}): Promise<string> {
  const client = rawClient(url, '/v1/chat/completions', chatBody(content, { stream: true }), KEY_A, headers)
  const id = await client.requestId()
  expect((await callEnd(id)).delivered).toBe(true)
  client.socket.pause()
  client.socket.resetAndDestroy()
  await client.closed
  return id
}

const LOG_LINE = 'model-gateway: client reset the connection after the stream was handed on; it will be kept'

describe.each([NODE_KINDS[0]!, EXPRESS_KINDS[0]!, KOA_KINDS[0]!])('a reset after a stream was handed on, $name', (kind) => {
  let fx: Fixture
  beforeAll(async () => {
    // A watch far longer than any test: what ends it here is the connection, never the clock.
    fx = await startFixture(kind, { recovery: { streams: 'finish' }, timeouts: { lateResetMs: 600_000 } })
  })
  afterAll(() => fx.close())

  it('keeps a stream whose client reset once its last frame was handed on, as a cut stream is kept', async () => {
    const requestId = await resetAtStreamEnd(fx.url, 'stream reset at its end')
    const record = await recordOf(fx, requestId)
    expect(record.interrupted_reason).toMatch(/^write failed: (ECONNRESET|EPIPE)$/)
    // The whole stream as relayed, and the answer assembled from it.
    expect(record.response.stream_raw).toContain('data: [DONE]')
    expect(JSON.parse(record.response.body_raw).choices[0].message.content).toEqual(expect.any(String))
    const line = fx.logs.find((log) => log.message === LOG_LINE && log.meta?.requestId === requestId)
    expect(line?.level).toBe('info')
    expect(Object.keys(line?.meta ?? {})).toEqual(['requestId'])
  })

  it('keeps no record for a stream followed by another request on the same connection, then a reset', async () => {
    const client = rawClient(fx.url, '/v1/chat/completions', chatBody('stream then next', { stream: true }), KEY_A)
    const text = readText(client)
    const requestId = await client.requestId()
    await readUntil(client, () => text().includes('\r\n0\r\n\r\n'))
    client.send('/v1/models', undefined, KEY_A)
    await readUntil(client, () => text().split('HTTP/1.1 200').length === 3)
    client.socket.resetAndDestroy()
    await client.closed
    // A reset stream after it, whose record is kept: by then the first one's watch has long ended.
    await recordOf(fx, await resetAtStreamEnd(fx.url, 'stream reset after the reused one'))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })

  it('watches one stream at a time per connection: many streams on one keep-alive connection gather no listeners', async () => {
    const { statuses, texts, ids, warnings } = await callsOnOneConnection(fx, 40, true)
    expect(statuses.every((status) => status === 200)).toBe(true)
    for (const text of texts) expect(text).toContain('data: [DONE]')
    expect(warnings).not.toContain('MaxListenersExceededWarning')
    for (const id of ids.slice(0, 3)) expect(await hasRecord(fx, id)).toBe(false)
  })
})

describe('the end of a stream, on Node', () => {
  let fx: Fixture
  beforeAll(async () => {
    fx = await startFixture(NODE_KINDS[0]!, { timeouts: { lateResetMs: 600_000 } })
  })
  afterAll(() => fx.close())

  it('keeps a keyed stream whose client reset once its last frame was handed on', async () => {
    const requestId = await resetAtStreamEnd(fx.url, 'keyed stream reset at its end', { 'idempotency-key': 'late-reset-keyed-1' })
    const record = await recordOf(fx, requestId)
    expect(record.interrupted_reason).toMatch(/^write failed: (ECONNRESET|EPIPE)$/)
  })

  it('watches no stream that cannot be resumed: its events are not held', async () => {
    const requestId = await resetAtStreamEnd(fx.url, 'plain stream reset at its end')
    // A keyed one after it is kept: by then a record of the plain one would have been too.
    await recordOf(fx, await resetAtStreamEnd(fx.url, 'keyed after plain', { 'idempotency-key': 'late-reset-keyed-2' }))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })

  it("says delivery 'unconfirmed' for a stream of 64 KiB or more, 'delivered' for a smaller one", async () => {
    const small = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('small stream', { stream: true }) })
    const smallEnd = await callEnd(String(small.headers['x-request-id']))
    expect([smallEnd.delivered, smallEnd.delivery]).toEqual([true, 'delivered'])
    const large = await call(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('large stream', { stream: true, mock: { content_bytes: 100 * 1024 } }),
    })
    expect(large.text.length).toBeGreaterThan(100 * 1024)
    const largeEnd = await callEnd(String(large.headers['x-request-id']))
    expect([largeEnd.delivered, largeEnd.delivery]).toEqual([true, 'unconfirmed'])
  })
})

describe('a finished stream held for the watch', () => {
  let fx: Fixture
  beforeAll(async () => {
    // Room for one stream of about 30 KB (its log's pages take 60 KiB), past half of what all streams may hold.
    fx = await startFixture(NODE_KINDS[0]!, {
      recovery: { streams: 'finish', maxHeldStreamBytes: 64 * 1024 },
      timeouts: { lateResetMs: 600_000 },
    })
  })
  afterAll(() => fx.close())

  it('is not held while the held streams are past half their bound: a running stream comes first', async () => {
    const client = rawClient(fx.url, '/v1/chat/completions', chatBody('large', { stream: true, mock: { content_bytes: 30_000 } }), KEY_A)
    const requestId = await client.requestId()
    expect((await callEnd(requestId)).delivered).toBe(true)
    client.socket.resetAndDestroy()
    await client.closed
    // A small one after it is held, and kept: by then a record of the large one would have been too.
    await recordOf(fx, await resetAtStreamEnd(fx.url, 'small'))
    expect(await hasRecord(fx, requestId)).toBe(false)
  })

  it('is given back when its watch ends: the next stream on the connection ends it, and so does a clean close', async () => {
    // Twenty logs of a 4 KiB page each, more than the 64 KiB all streams may hold, were none given back.
    const client = new Client(new URL(fx.url).origin, { pipelining: 1 })
    try {
      for (let i = 0; i < 20; i++) {
        const res = await client.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
          body: JSON.stringify(chatBody(`given back ${i}`, { stream: true })),
        })
        expect(await res.body.text()).toContain('data: [DONE]')
      }
    } finally {
      await client.close()
    }
    // Its log could be held, whole, and kept.
    await recordOf(fx, await resetAtStreamEnd(fx.url, 'after twenty'))
  })
})
