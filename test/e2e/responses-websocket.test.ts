import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { KEY_A, KEY_B, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { finalResponse, outputText, SocketClient } from '../support/socket-client.js'
import { SOCKET_MODELS, type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// The Responses API's WebSocket mode, as Codex uses it (supports_websockets = true): one socket, `response.create`
// frames, every stream event back as a text frame with its sequence number, continuations that send only the new
// input items (with `store: false`, through translation to upstreams that keep no state), and errors as frames that
// leave the socket usable.

let gw: SocketGateway
beforeAll(async () => {
  gw = await startSocketGateway()
})
afterAll(() => gw.close())

const EXEC = {
  type: 'function',
  name: 'exec_command',
  description: 'Runs a shell command.',
  strict: false,
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
}

describe('a socket', () => {
  it('answers a warm-up (generate: false) with created and completed, numbered, and calls no upstream', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    gw.mock.resetRequests()
    const frames = await client.create({
      model: 'gpt-4o-mini',
      input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] }],
      store: false,
      generate: false,
      stream: true,
    })
    expect(frames.map((f) => f.type)).toEqual(['response.created', 'response.completed'])
    expect(frames.map((f) => f.sequence_number)).toEqual([0, 1])
    expect(frames[1]?.response.id).toMatch(/^resp_/)
    expect(gw.mock.requests).toHaveLength(0)
    await client.close()
  })
  it('streams a text response, one frame per event, numbered from 0', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    const frames = await client.create({ model: 'gpt-4o-mini', input: 'say hi', mock: { content: 'hi there' } })
    expect(frames[0]?.type).toBe('response.created')
    expect(frames.at(-1)?.type).toBe('response.completed')
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i))
    expect(outputText(finalResponse(frames))).toBe('hi there')
    await client.close()
  })
})

/** The function call a response's output asks for. */
const functionCall = (frames: Record<string, any>[]) =>
  (finalResponse(frames).output as any[]).find((item) => item.type === 'function_call')

describe.each(SOCKET_MODELS)('a 10-turn tool loop on %s model, store: false, each turn sending only its new items', (_, model) => {
  it('continues from the warm-up and from each response, and the upstream gets the whole conversation every turn', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    const common = { model, tools: [EXEC], tool_choice: 'auto', store: false, stream: true, include: ['reasoning.encrypted_content'] }
    const warm = await client.create({
      ...common,
      input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] }],
      generate: false,
    })
    let previous = finalResponse(warm).id as string
    let items: unknown[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] }]
    const before = gw.usage.length
    gw.mock.resetRequests()
    for (let turn = 1; turn <= 10; turn++) {
      const frames = await client.create({ ...common, previous_response_id: previous, input: items })
      expect(frames.at(-1)?.type, JSON.stringify(frames.at(-1))).toBe('response.completed')
      expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i))
      // The response shows what the frame asked for, though the gateway runs and keeps it as a background response.
      expect(finalResponse(frames)).toMatchObject({ background: false, store: false, previous_response_id: previous })
      expect(frames[0]?.response).toMatchObject({ background: false, store: false, previous_response_id: previous })
      const called = functionCall(frames)
      expect(called?.name).toBe('exec_command')
      previous = finalResponse(frames).id
      items = [
        { type: 'function_call_output', call_id: called.call_id, output: `ok ${turn}` },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: `now step ${turn + 1}` }] },
      ]
    }
    const sent = gw.mock.requests.filter((request) => request.method === 'POST')
    expect(sent).toHaveLength(10)
    const last = sent.at(-1)?.body ?? ''
    // The tenth call carries the warm-up's developer message, the first user message and nine tool outputs.
    for (const text of ['be brief', 'list the files', ...Array.from({ length: 9 }, (_, i) => `ok ${i + 1}`)]) expect(last).toContain(text)
    expect(last).not.toContain('previous_response_id')
    // One usage event per response, as any call.
    const events = gw.usage.slice(before)
    expect(events).toHaveLength(10)
    expect(events.every((event) => event.model === model && event.complete && event.endpoint === 'responses')).toBe(true)
    // The upstream counted the conversation as it grew.
    expect(events.at(-1)?.input_tokens).toBeGreaterThan(events[0]?.input_tokens ?? Number.POSITIVE_INFINITY)
    await client.close()
  })
})

describe('error frames leave the socket usable', () => {
  it('refuses an unknown previous_response_id with previous_response_not_found', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    const [frame] = await client.create({ model: 'gpt-4o-mini', previous_response_id: 'resp_nothing', input: 'hi' })
    expect(frame).toEqual({
      type: 'error',
      status: 400,
      error: {
        type: 'invalid_request_error',
        code: 'previous_response_not_found',
        message: "Previous response with id 'resp_nothing' not found.",
        param: 'previous_response_id',
      },
    })
    expect(finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'hi' })).status).toBe('completed')
    await client.close()
  })
  it("does not find another owner's response", async () => {
    const alice = await SocketClient.open(gw.url, KEY_A)
    const id = finalResponse(await alice.create({ model: 'gpt-4o-mini', input: 'hi' })).id
    await alice.close()
    const bob = await SocketClient.open(gw.url, KEY_B)
    const [frame] = await bob.create({ model: 'gpt-4o-mini', previous_response_id: id, input: 'and?' })
    expect(frame?.error.code).toBe('previous_response_not_found')
    await bob.close()
  })
  it('refuses a second create while a response runs, and the first completes', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    const from = client.frames.length
    client.send({ model: 'gpt-4o-mini', input: 'slow', mock: { chunks: 5, chunk_delay_ms: 40, content: 'slowly' } })
    client.send({ model: 'gpt-4o-mini', input: 'again' })
    const frames = await client.until(from, (frame) => frame.type === 'response.completed')
    const refusal = frames.find((frame) => frame.type === 'error')
    expect(refusal?.error.code).toBe('response_in_progress')
    expect(outputText(finalResponse(frames))).toBe('slowly')
    await client.close()
  })
  it('answers a validation error, a background create, a bad frame and an unknown model as error frames', async () => {
    const client = await SocketClient.open(gw.url, KEY_A)
    const [background] = await client.create({ model: 'gpt-4o-mini', input: 'hi', background: true })
    expect(background?.error).toMatchObject({ code: 'invalid_request', param: 'background' })
    const [unknown] = await client.create({ model: 'no-such-model', input: 'hi' })
    expect(unknown).toMatchObject({ type: 'error', status: 404, error: { code: 'model_not_found', param: 'model' } })
    const [invalid] = await client.create({ model: 'gpt-4o-mini', input: 'hi', temperature: 'hot' })
    expect(invalid).toMatchObject({ type: 'error', status: 400, error: { param: 'temperature' } })
    const from = client.frames.length
    client.ws.send('{not json')
    const [bad] = await client.until(from)
    expect(bad?.error.code).toBe('invalid_json')
    const [other] = await client.create({ type: 'response.cancel' })
    expect(other?.error.param).toBe('type')
    expect(finalResponse(await client.create({ model: 'gpt-4o-mini', input: 'hi' })).status).toBe('completed')
    await client.close()
  })
})

describe('the upgrade', () => {
  it('is refused with 401 in the Responses error shape before switching protocols, without a key or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer sk-wrong' }] as Record<string, string>[]) {
      const refusal = await SocketClient.refusal(gw.url, headers)
      expect(refusal.status).toBe(401)
      expect(JSON.parse(refusal.body).error).toMatchObject({ code: 'invalid_api_key', type: 'invalid_request_error' })
    }
    // No upstream key is ever part of a refusal.
    const refusal = await SocketClient.refusal(gw.url, { authorization: 'Bearer sk-wrong' })
    expect(refusal.body).not.toContain(UPSTREAM_KEY)
  })
  it("answers an upgrade on a path it has no WebSocket for 404, and leaves it to the server's other listener if there is one", async () => {
    const upgrade = (path: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}${path}`, { headers: { authorization: `Bearer ${KEY_A}` } })
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
        ws.once('error', () => {})
      })
    expect(await upgrade('/v1/chat/completions')).toBe(404)
    const other = (req: IncomingMessage, socket: Duplex) => {
      if (req.url === '/elsewhere') socket.end('HTTP/1.1 418 I am a teapot\r\ncontent-length: 0\r\n\r\n')
    }
    gw.server.on('upgrade', other)
    try {
      expect(await upgrade('/elsewhere')).toBe(418)
    } finally {
      gw.server.off('upgrade', other)
    }
  })
  it('leaves HTTP calls to the same path as they were', async () => {
    const response = await call(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}` },
      body: { model: 'gpt-4o-mini', input: 'hi' },
    })
    expect(response.status).toBe(200)
    expect(response.json.status).toBe('completed')
  })
})
