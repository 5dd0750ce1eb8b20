import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { finalResponse, outputText, SocketClient } from '../support/socket-client.js'
import { type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// A response whose socket went before it was delivered is an answer its client did not get: it is kept as a recovery
// record (listed, found by the frame the client sent, fetched, replayed as a stream), as a cut HTTP call's is. And the
// conversation a socket keeps between turns is bounded (`maxConversationBytes`).

let gw: SocketGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const auth = { authorization: `Bearer ${KEY_A}` }

/** The `data` of each event of a server-sent event stream. */
const sseData = (text: string) =>
  text
    .split('\n\n')
    .flatMap((event) => event.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => JSON.parse(line.slice(6)))

describe('a socket dropped mid-response', () => {
  it('leaves its finished answer in the Recoveries API: listed, looked up by its frame, fetched, replayed', async () => {
    gw = await startSocketGateway()
    const client = await SocketClient.open(gw.url, KEY_A)
    // A delivered response on the same socket: no record.
    const delivered = finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'first', mock: { content: 'got it' } }))
    gw.mock.steer('drop-mid-stream', { chunks: 8, chunk_delay_ms: 30, content: 'the whole answer' })
    const frame = {
      type: 'response.create',
      model: 'claude-sonnet-4-5',
      previous_response_id: delivered.id,
      input: 'tell me drop-mid-stream',
      store: false,
    }
    const from = client.frames.length
    client.ws.send(JSON.stringify(frame))
    await client.until(from, (f) => f.type === 'response.output_text.delta')
    const id = client.frames[from]?.response.id as string
    // The client's connection goes without a close frame, as a network that drops does.
    ;(client.ws as unknown as { _socket: Socket })._socket.destroy()

    const requestId = id.replace(/^resp_/, '')
    const listed = await eventually(async () => {
      const list = await call(`${gw?.url}/v1/recoveries`, { headers: auth })
      return (list.json.items as Record<string, unknown>[]).find((item) => item.request_id === requestId)
    })
    expect(listed.interrupted_reason).toBe('context canceled')
    const all = await call(`${gw.url}/v1/recoveries`, { headers: auth })
    expect(all.json.count).toBe(1)

    const record = (await call(`${gw.url}/v1/recoveries/${requestId}`, { headers: auth })).json
    expect(record.request).toMatchObject({ endpoint: 'responses', path: '/v1/responses', model: 'claude-sonnet-4-5' })
    expect(JSON.parse(record.request.body_raw)).toEqual(frame)
    const answer = JSON.parse(record.response.body_raw)
    expect(answer).toMatchObject({ id, status: 'completed', background: false, store: false, previous_response_id: delivered.id })
    expect(outputText(answer)).toBe('the whole answer')

    const found = await call(`${gw.url}/v1/recoveries/lookup`, { headers: auth, body: frame })
    expect(found.json.items.map((item: { request_id: string }) => item.request_id)).toEqual([requestId])

    const replayed = sseData((await call(`${gw.url}/v1/recoveries/${requestId}/stream`, { headers: auth })).text)
    expect(replayed[0]).toMatchObject({ type: 'response.created', sequence_number: 0 })
    expect(replayed.at(-1)).toMatchObject({ type: 'response.completed', response: { id, background: false } })
    const deltas = replayed.filter((event) => event.type === 'response.output_text.delta')
    expect(deltas.map((event) => event.delta).join('')).toBe('the whole answer')
    // Resumed after the third event: the rest, from the fourth.
    const rest = sseData((await call(`${gw.url}/v1/recoveries/${requestId}/stream?after=3`, { headers: auth })).text)
    expect(rest).toEqual(replayed.slice(3))
  })

  it('cut by the gateway for frames left untaken, is kept with the reason', async () => {
    gw = await startSocketGateway({ sockets: { maxBufferedBytes: 64 * 1024 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    client.send({ model: 'gpt-4o-mini', input: 'a lot', mock: { content_bytes: 2 * 1024 * 1024, chunks: 64 } })
    // It stops reading: the kernel's buffers fill, then the gateway's.
    client.ws.pause()
    await eventually(() => gw?.logs.find((log) => log.message.includes('maxBufferedBytes')), 30_000)
    client.ws.resume()
    const usage = await eventually(() => gw?.usage[0], 30_000)
    const record = await eventually(async () => {
      const got = await call(`${gw?.url}/v1/recoveries/${usage.requestId}`, { headers: auth })
      return got.status === 200 ? got.json : undefined
    }, 30_000)
    expect(record.interrupted_reason).toBe('write failed: ENOBUFS')
    expect(outputText(JSON.parse(record.response.body_raw))).toHaveLength(2 * 1024 * 1024)
  }, 60_000)
})

describe('maxConversationBytes', () => {
  const bulky = (marker: string) => `${marker} ${'x'.repeat(1500)}`

  it('keeps a conversation up to the bound; past it a continuation is previous_response_not_found and the socket stays', async () => {
    gw = await startSocketGateway({ sockets: { maxConversationBytes: 4096 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    // Each turn adds about 1.7 KB: its input and a short answer.
    const turn = (input: string, previous?: string) =>
      client.create({ model: 'gpt-4o-mini', previous_response_id: previous, input, store: false, mock: { content: 'ok' } })
    const first = finalResponse(await turn(bulky('one')))
    const second = finalResponse(await turn(bulky('two'), first.id))
    expect(second.status).toBe('completed')
    // Within the bound: the upstream got both turns.
    const sent = gw.mock.requests.filter((request) => request.method === 'POST').at(-1)?.body ?? ''
    expect(sent).toContain('one x')
    expect(sent).toContain('two x')
    // This turn takes the conversation past 4096 bytes: it is answered, and not kept.
    const third = finalResponse(await turn(bulky('three'), second.id))
    expect(third.status).toBe('completed')
    const [refused] = await client.create({ model: 'gpt-4o-mini', previous_response_id: third.id, input: 'four', store: false })
    expect(refused).toMatchObject({
      type: 'error',
      status: 400,
      error: { type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' },
    })
    expect(refused?.error.message).toContain('maxConversationBytes: 4096')
    // The socket stays usable: the whole input again, without the previous id.
    const again = await client.create({ model: 'gpt-4o-mini', input: 'the whole input again', mock: { content: 'fine' } })
    expect(outputText(finalResponse(again))).toBe('fine')
    await client.close()
    // Nor was it written for another socket.
    const other = await SocketClient.open(gw.url, KEY_A)
    const [elsewhere] = await other.create({ model: 'gpt-4o-mini', previous_response_id: third.id, input: 'four', store: false })
    expect(elsewhere).toMatchObject({ type: 'error', error: { code: 'previous_response_not_found' } })
    await other.close()
  })

  it('counts a warm-up, and is an option checked as the others', async () => {
    gw = await startSocketGateway({ sockets: { maxConversationBytes: 1024 } })
    const client = await SocketClient.open(gw.url, KEY_A)
    const warm = finalResponse(await client.create({ model: 'gpt-4o-mini', input: bulky('warm'), generate: false }))
    const [refused] = await client.create({ model: 'gpt-4o-mini', previous_response_id: warm.id, input: 'go' })
    expect(refused).toMatchObject({ type: 'error', error: { code: 'previous_response_not_found' } })
    const small = finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'short', generate: false }))
    const frames = await client.create({ model: 'gpt-4o-mini', previous_response_id: small.id, input: 'go' })
    expect(finalResponse(frames).status).toBe('completed')
    await client.close()
    const { upgradeHandler } = await import('../../adapters/node.js')
    expect(() => upgradeHandler(gw?.gateway as never, { maxConversationBytes: -1 })).toThrow(/maxConversationBytes/)
  })
})
