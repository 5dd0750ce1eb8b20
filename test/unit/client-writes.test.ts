import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { afterEach, expect, it } from 'vitest'
import type { Deadline } from '../../src/http/deadlines.js'
import { ClientSink } from '../../src/http/sink.js'

/** A deadline the test expires by hand: the watch's decisions, without a clock. */
class ManualDeadline implements Deadline {
  armed: Array<() => void> = []
  arm(onExpire: () => void): () => void {
    this.armed.push(onExpire)
    return () => {
      this.armed = this.armed.filter((f) => f !== onExpire)
    }
  }
  expire(): void {
    const due = this.armed
    this.armed = []
    for (const f of due) f()
  }
}

/** Waits, a turn of the event loop at a time (at most `turns`), until `check` holds. */
async function turnsUntil(check: () => boolean, turns = 1_000_000): Promise<void> {
  for (let i = 0; i < turns && !check(); i++) await new Promise(setImmediate)
  expect(check()).toBe(true)
}

let server: http.Server | undefined
afterEach(() => server?.close())

const BODY_BYTES = 20 * 1024 * 1024

/** A server that answers 20 MiB whole through a client sink, and a client that reads nothing unless told. */
async function frozenExchange() {
  const deadline = new ManualDeadline()
  let res: http.ServerResponse | undefined
  server = http.createServer((_req, response) => {
    res = response
    new ClientSink(response, deadline).complete({ status: 200, headers: {} }, Buffer.alloc(BODY_BYTES, 97))
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  client.on('error', () => {})
  client.pause()
  client.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n')
  await turnsUntil(() => res !== undefined && deadline.armed.length === 1)
  return { deadline, res: res as http.ServerResponse, client }
}

it('cuts a client that took nothing for a whole period', async () => {
  const { deadline, res, client } = await frozenExchange()
  // The sockets' buffers take a few slices at first (progress); then nothing moves, and the next period cuts.
  let periods = 0
  while (!res.destroyed && periods < 5) {
    await turnsUntil(() => deadline.armed.length === 1)
    for (let i = 0; i < 100; i++) await new Promise(setImmediate)
    deadline.expire()
    periods++
  }
  expect(res.destroyed).toBe(true)
  expect(periods).toBeLessThanOrEqual(3)
  client.destroy()
})

it('leaves a slow client that took some bytes in each period, and cuts it once it stops', async () => {
  const { deadline, res, client } = await frozenExchange()
  let read = 0
  client.on('data', (chunk: Buffer) => {
    read += chunk.length
  })
  let drains = 0
  res.on('drain', () => {
    drains++
  })
  for (let period = 0; period < 3; period++) {
    // Reads on until the gateway side drained a slice (the sink's own listener, added first, saw it too), then stops.
    client.resume()
    const before = drains
    await turnsUntil(() => drains > before)
    client.pause()
    deadline.expire()
    expect(res.destroyed).toBe(false)
    await turnsUntil(() => deadline.armed.length === 1)
  }
  expect(read).toBeLessThan(BODY_BYTES)
  deadline.expire()
  expect(res.destroyed).toBe(true)
  client.destroy()
})
