import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
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
