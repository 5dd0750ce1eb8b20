import net from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

let fx: Fixture
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!)
})
afterAll(() => fx.close())

/** A raw client that sends a chat call, reads `readBytes` of the answer, stops reading, then resets the connection. */
function readPartThenReset(body: string, readBytes: number): Promise<void> {
  const { port } = new URL(fx.url)
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    socket.on('close', () => resolve())
    const head = [
      'POST /v1/chat/completions HTTP/1.1',
      'host: gateway',
      `authorization: ${bearer(KEY_A).authorization}`,
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
    ]
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
    let read = 0
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length
      if (read >= readBytes && !socket.isPaused()) {
        socket.pause()
        setTimeout(() => socket.resetAndDestroy(), 50)
      }
    })
  })
}

it('keeps a record when the client read part of a large answer and reset, though Node reported it finished', async () => {
  const body = JSON.stringify(chatBody('partial read', { mock: { content_bytes: 24 * 1024 * 1024 } }))
  await readPartThenReset(body, 128 * 1024)
  const listed = await eventually(async () => {
    const list = await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
    return list.json.count > 0 ? list.json : undefined
  }, 15_000)
  expect(listed.items[0].interrupted_reason).toBe('write failed: ECONNRESET')
  const record = await call(`${fx.url}/v1/recoveries/${listed.items[0].request_id}`, { headers: bearer(KEY_A) })
  expect(record.json.response.response_body_size).toBeGreaterThan(24 * 1024 * 1024)
})
