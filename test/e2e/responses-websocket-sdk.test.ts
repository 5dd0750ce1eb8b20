import OpenAI from 'openai'
import { ResponsesWS } from 'openai/resources/responses/ws'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { KEY_A } from '../support/fixture.js'
import { type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// The openai SDK's own WebSocket helper (`ResponsesWS`), unchanged, against the gateway: a response and a
// continuation of it by id with only the new input, on a translated (Anthropic) model, and an error event it reads.

let gw: SocketGateway
beforeAll(async () => {
  gw = await startSocketGateway()
})
afterAll(() => gw.close())

/** Sends one create and resolves with the SDK's events up to the one that ends it. */
function create(ws: ResponsesWS, body: Record<string, unknown>): Promise<Array<Record<string, any>>> {
  return new Promise((resolve) => {
    const events: Array<Record<string, any>> = []
    const onEvent = (event: Record<string, any>) => {
      events.push(event)
      if (event.type === 'response.completed' || event.type === 'response.failed' || event.type === 'error') {
        ws.off('event', onEvent)
        resolve(events)
      }
    }
    ws.on('event', onEvent)
    ws.send({ type: 'response.create', ...body } as never)
  })
}

it('serves ResponsesWS: a response, its continuation by id, and an error event', async () => {
  const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` })
  const ws = new ResponsesWS(client)
  const errors: unknown[] = []
  ws.on('error', (error) => errors.push(error))
  const first = await create(ws, { model: 'claude-sonnet-4-5', input: 'my name is Ada', store: false })
  const id = first.at(-1)?.response.id
  expect(first.at(-1)?.type).toBe('response.completed')
  gw.mock.resetRequests()
  const second = await create(ws, { model: 'claude-sonnet-4-5', previous_response_id: id, input: 'what is my name?', store: false })
  expect(second.at(-1)?.type).toBe('response.completed')
  expect(gw.mock.requests.at(-1)?.body).toContain('my name is Ada')
  const refused = await create(ws, { model: 'claude-sonnet-4-5', previous_response_id: 'resp_gone', input: 'and?' })
  expect(refused.at(-1)?.error?.code).toBe('previous_response_not_found')
  expect(errors).toHaveLength(1)
  ws.close()
})
