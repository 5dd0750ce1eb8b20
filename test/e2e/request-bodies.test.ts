import { once } from 'node:events'
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { bearer, KEY_A, useFixture } from '../support/fixture.js'
import { call } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

describe('timeouts.requestBodyMs', () => {
  const fx = useFixture(NODE, { timeouts: { requestBodyMs: 300 } })

  it('answers 408 and closes the connection when a body trickles in too slowly, and forwards nothing', async () => {
    const { port } = new URL(fx.url)
    const socket = net.connect(Number(port), '127.0.0.1')
    await once(socket, 'connect')
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"mo`,
    )
    const drip = setInterval(() => socket.write(' '), 50)
    const started = Date.now()
    await once(socket, 'close')
    clearInterval(drip)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toMatch(/connection: close/i)
    expect(answer).toContain('"code":"request_timeout"')
    expect(fx.mock.requests).toHaveLength(0)
    // The gateway still answers others at once.
    expect((await call(`${fx.url}/v1/models`)).status).toBe(200)
  })
})

describe('request bodies must be UTF-8', () => {
  const fx = useFixture(NODE)

  it.each([
    ['a lone continuation byte', Buffer.from([0x80]), 17],
    ['latin-1 é', Buffer.from([0xe9]), 17],
    ['an overlong slash', Buffer.from([0xc0, 0xaf]), 17],
    ['a UTF-16 surrogate', Buffer.from([0xed, 0xa0, 0x80]), 17],
  ])('answers 400 naming the offset of %s', async (_name, bad, offset) => {
    const body = Buffer.concat([Buffer.from('{"model":"gpt-4o-'), bad, Buffer.from('","messages":[{"role":"user","content":"x"}]}')])
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toBe(`The request body is not valid UTF-8 at byte ${offset}; JSON must be sent as UTF-8.`)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('names the offset in a large body too, which is checked a window at a time', async () => {
    // 3 MiB of content in multi-byte characters, so windows fall inside them; the defect is in the third MiB.
    const head = Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"')
    const text = Buffer.from('证明😀'.repeat(300_000))
    const offset = head.length + 2_500_000
    const body = Buffer.concat([
      head,
      text.subarray(0, 2_500_000),
      Buffer.from([0xc0, 0xaf]),
      text.subarray(2_500_000),
      Buffer.from('"}]}'),
    ])
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toBe(`The request body is not valid UTF-8 at byte ${offset}; JSON must be sent as UTF-8.`)
    expect(fx.mock.requests).toHaveLength(0)
  })

  it('passes multi-byte UTF-8 through untouched', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"证明 😀 é"}]}'),
    })
    expect(res.status).toBe(200)
  })
})
