import { afterEach, describe, expect, it } from 'vitest'
import { sessionsFor } from '../../src/websocket/hook.js'
import { KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { finalResponse, outputText, SocketClient } from '../support/socket-client.js'
import { type Host, type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// What a socket that goes, stalls or outlives its bounds does not lose: a response runs to its end and is kept by id,
// a continuation works from another socket, and every bound of the sockets has its default, its option and a test.

let gw: SocketGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const auth = { authorization: `Bearer ${KEY_A}` }

describe('a socket that goes', () => {
  it('mid-response lets the response finish and keeps it by id', async () => {
    gw = await startSocketGateway()
    const client = await SocketClient.open(gw.url, KEY_A)
    // A translated body carries no `mock` field: the mock is steered by a marker in the input.
    gw.mock.steer('drop-mid-response', { chunks: 8, chunk_delay_ms: 30, content: 'the whole answer' })
    client.send({ model: 'claude-sonnet-4-5', input: 'tell me drop-mid-response', store: false })
    const upToDelta = await client.until(0, (frame) => frame.type === 'response.output_text.delta')
    expect(upToDelta.at(-1)?.type).toBe('response.output_text.delta')
    const id = client.frames[0]?.response.id as string
    client.ws.terminate()
    const kept = await eventually(async () => {
      const response = await call(`${gw?.url}/v1/responses/${id}`, { headers: auth })
      return response.json?.status === 'completed' ? response.json : undefined
    })
    expect(outputText(kept)).toBe('the whole answer')
    // Its usage event says it completed.
    await eventually(() => gw?.usage.find((event) => event.complete && event.model === 'claude-sonnet-4-5'))
  })
  it('is continued from on a new socket, from its last response', async () => {
    gw = await startSocketGateway()
    const first = await SocketClient.open(gw.url, KEY_A)
    const warm = await first.create({ model: 'gemini-2.5-flash', input: 'remember: blue', store: false, generate: false })
    const answered = await first.create({
      model: 'gemini-2.5-flash',
      previous_response_id: finalResponse(warm).id,
      input: 'ok?',
      store: false,
    })
    await first.close()
    gw.mock.resetRequests()
    const second = await SocketClient.open(gw.url, KEY_A)
    const id = finalResponse(answered).id
    // The items are written once the socket closed: a reconnect right after may look before they land.
    const frames = await eventually(async () => {
      const got = await second.create({ model: 'gemini-2.5-flash', previous_response_id: id, input: 'which colour?', store: false })
      return got.at(-1)?.type === 'response.completed' ? got : undefined
    })
    expect(finalResponse(frames).status).toBe('completed')
    const sent = gw.mock.requests.filter((request) => request.method === 'POST').at(-1)?.body ?? ''
    for (const text of ['remember: blue', 'ok?', 'which colour?']) expect(sent).toContain(text)
    await second.close()
  })
})

describe('bounds', () => {
  it('cuts a client that reads nothing past maxBufferedBytes, and keeps the response', async () => {
    gw = await startSocketGateway({ sockets: { maxBufferedBytes: 64 * 1024 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    client.send({ model: 'gpt-4o-mini', input: 'a lot', mock: { content_bytes: 8 * 1024 * 1024, chunks: 64 } })
    // It stops reading: the kernel's buffers fill, then the gateway's.
    client.ws.pause()
    await eventually(() => gw?.logs.find((log) => log.message.includes('maxBufferedBytes')), 30_000)
    client.ws.resume()
    await client.whenClosed()
    const id = client.frames[0]?.response.id as string | undefined
    const listed = id ?? (await firstResponseId(gw))
    const kept = await eventually(async () => {
      const response = await call(`${gw?.url}/v1/responses/${listed}`, { headers: auth })
      return response.json?.status === 'completed' ? response.json : undefined
    }, 30_000)
    expect(outputText(kept)).toHaveLength(8 * 1024 * 1024)
    // 8 MiB through a socket, its record kept too: seconds on a loaded machine.
  }, 60_000)
  it('closes a socket with 1000 at maxConnectionMs, once its response has ended', async () => {
    gw = await startSocketGateway({ sockets: { maxConnectionMs: 300 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    const frames = await client.create({ model: 'gpt-4o-mini', input: 'slow', mock: { chunks: 10, chunk_delay_ms: 50 } })
    expect(frames.at(-1)?.type).toBe('response.completed')
    expect(await client.whenClosed()).toEqual({ code: 1000, reason: 'connection lifetime reached' })
  })
  it('cuts a socket that answers no ping within pingIntervalMs', async () => {
    // Not much shorter: a loaded machine may answer a ping late, and an answering socket would be cut too.
    gw = await startSocketGateway({ sockets: { pingIntervalMs: 250 } })
    const answering = await SocketClient.open(gw.url, KEY_A)
    const silent = await SocketClient.open(gw.url, KEY_A)
    // A paused client reads nothing, its pongs included.
    silent.ws.pause()
    // The gateway cut it: one socket is left.
    await eventually(() => (sessionsFor(gw?.gateway as never)?.size === 1 ? true : undefined))
    silent.ws.resume()
    const closed = await silent.whenClosed()
    expect(closed.code).toBe(1006)
    // One that answers its pings stays.
    expect(finalResponse(await answering.create({ model: 'gpt-4o-mini', input: 'hi' })).status).toBe('completed')
    await answering.close()
  })
  it('answers an upgrade past maxConnections with 503', async () => {
    gw = await startSocketGateway({ sockets: { maxConnections: 2 } })
    const held = [await SocketClient.open(gw.url, KEY_A), await SocketClient.open(gw.url, KEY_A)]
    const refusal = await SocketClient.refusal(gw.url, auth)
    expect(refusal.status).toBe(503)
    for (const client of held) await client.close()
    const again = await eventually(() => SocketClient.open(gw?.url as string, KEY_A).catch(() => undefined))
    await again.close()
  })
  it('closes a socket whose frame is larger than maxFrameBytes with 1009', async () => {
    gw = await startSocketGateway({ sockets: { maxFrameBytes: 1024 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    client.send({ model: 'gpt-4o-mini', input: 'x'.repeat(4096) })
    expect((await client.whenClosed()).code).toBe(1009)
  })
  it('rejects options that are not bounds', async () => {
    gw = await startSocketGateway()
    const { upgradeHandler } = await import('../../adapters/node.js')
    expect(() => upgradeHandler(gw?.gateway as never, { maxBufferedBytes: 0 })).toThrow(/maxBufferedBytes/)
    expect(() => upgradeHandler(gw?.gateway as never, { maxConections: 1 } as never)).toThrow(/unknown option 'maxConections'/)
  })
})

describe('per response, as any call', () => {
  it("refuses a response past the owner's limits with a 429 error frame, and the socket stays", async () => {
    gw = await startSocketGateway({ gateway: { limits: { owners: { requestsPerMinute: 1 } } } })
    const client = await SocketClient.open(gw.url, KEY_A)
    expect(finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'one' })).status).toBe('completed')
    const [refused] = await client.create({ model: 'gpt-4o-mini', input: 'two' })
    expect(refused).toMatchObject({ type: 'error', status: 429, error: { code: 'rate_limit_exceeded' } })
    // A warm-up goes nowhere upstream: no limit to pass.
    expect((await client.create({ model: 'gpt-4o-mini', input: 'warm', generate: false })).at(-1)?.type).toBe('response.completed')
    await client.close()
  })
})

describe('gateway.close()', () => {
  it('closes an idle socket with 1001 and one answering once its response ended', async () => {
    const local = await startSocketGateway()
    const idle = await SocketClient.open(local.url, KEY_A)
    const busy = await SocketClient.open(local.url, KEY_A)
    busy.send({ model: 'gpt-4o-mini', input: 'slow', mock: { chunks: 10, chunk_delay_ms: 40, content: 'all of it' } })
    await busy.until(0, (frame) => frame.type === 'response.output_text.delta')
    const closing = local.close()
    expect(await idle.whenClosed()).toEqual({ code: 1001, reason: 'the gateway is shutting down' })
    expect((await busy.whenClosed()).code).toBe(1001)
    expect(outputText(finalResponse(await busy.until(0)))).toBe('all of it')
    await closing
  })
})

describe.each<Host>(['express', 'koa'])('under %s', (host) => {
  it('serves the socket through the http.Server the app listens on, under a prefix', async () => {
    gw = await startSocketGateway({ host, prefix: '/ai' })
    const client = await SocketClient.open(gw.url, KEY_A)
    expect(outputText(finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'hi', mock: { content: 'hello' } })))).toBe('hello')
    await client.close()
    // HTTP calls go through the app's middleware as before.
    const response = await call(`${gw.url}/v1/responses`, { method: 'POST', headers: auth, body: { model: 'gpt-4o-mini', input: 'hi' } })
    expect(response.status).toBe(200)
  })
})

/** The id of the first response the gateway kept (a client cut before its first frame never saw it). */
async function firstResponseId(at: SocketGateway): Promise<string> {
  // It ends once its upstream has sent all 8 MiB, which a loaded machine takes seconds for.
  const event = await eventually(() => at.usage[0], 30_000)
  return `resp_${event.requestId}`
}
