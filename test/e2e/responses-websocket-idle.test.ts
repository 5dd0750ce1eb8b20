import { afterAll, beforeAll, expect, it } from 'vitest'
import { sessionsFor } from '../../src/websocket/hook.js'
import { KEY_A } from '../support/fixture.js'
import { eventually } from '../support/http.js'
import { finalResponse, SocketClient } from '../support/socket-client.js'
import { type SocketGateway, startSocketGateway } from '../support/socket-gateway.js'

// Many idle sockets, as many Codex sessions left open: each holds a socket and its last response's items, and all
// close with 1001 on shutdown. The memory each costs is a figure of the bench (bench/parts/websocket.mjs);
// this test prints it and asserts only what must hold.

const SOCKETS = 1000
let gw: SocketGateway
beforeAll(async () => {
  gw = await startSocketGateway()
})
afterAll(() => gw.close())

it(`holds ${SOCKETS} idle sockets, warms each up, and closes them all with 1001`, async () => {
  const before = process.memoryUsage().heapUsed
  const clients: SocketClient[] = []
  for (let i = 0; i < SOCKETS; i += 100) {
    clients.push(...(await Promise.all(Array.from({ length: 100 }, () => SocketClient.open(gw.url, KEY_A)))))
  }
  const sessions = sessionsFor(gw.gateway)
  await eventually(() => (sessions?.size === SOCKETS ? true : undefined))
  // Each is warmed up, as Codex does: a socket then holds its warm-up's items.
  await Promise.all(clients.map((client) => client.create({ model: 'gpt-4o-mini', input: 'be brief', generate: false })))
  const perSocket = (process.memoryUsage().heapUsed - before) / SOCKETS
  console.log(`heap per idle socket (client and server side in one process): ${Math.round(perSocket / 1024)} KiB`)
  expect(sessions?.size).toBe(SOCKETS)
  // The last one still answers.
  expect(finalResponse(await (clients.at(-1) as SocketClient).create({ model: 'gpt-4o-mini', input: 'hi' })).status).toBe('completed')
  const closing = gw.gateway.close()
  const codes = await Promise.all(clients.map((client) => client.whenClosed().then((closed) => closed.code)))
  await closing
  expect(new Set(codes)).toEqual(new Set([1001]))
}, 60_000)
