import { once } from 'node:events'
import type { IncomingMessage } from 'node:http'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, KEY_B, useFixture } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

describe('limits.maxInFlightRequestBytes', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], {
    limits: { maxRequestBytes: 1000, maxInFlightRequestBytes: 3000, maxInFlightRequestBytesPerOwner: 2000 },
  })
  const sockets: net.Socket[] = []
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy()
  })

  /** A client that declares a body of `length` bytes, sends 9 bytes of it and waits. */
  async function stalled(key: string, length = 1000): Promise<{ answer: () => string }> {
    const socket = net.connect(Number(new URL(fx.url).port), '127.0.0.1')
    sockets.push(socket)
    await once(socket, 'connect')
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    socket.on('error', () => {})
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"model":"`,
    )
    return { answer: () => answer }
  }

  const post = (key: string) => call(`${fx.url}/v1/chat/completions`, { headers: bearer(key), body: chatBody('x'.repeat(800)) })

  it('answers 503 with retry-after past an owner’s share and past the total, and recovers', async () => {
    await stalled(KEY_A)
    await stalled(KEY_A)
    // A's share (2000) is held by two small declared bodies (each read into a buffer of its declared size from its
    // first bytes): a third is refused at its first chunk.
    const refused = await eventually(async () => {
      const res = await post(KEY_A)
      return res.status === 503 ? res : undefined
    })
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json.error.code).toBe('overloaded')
    // B still has room until the total (3000) is reached.
    await stalled(KEY_B)
    await eventually(async () => (await post(KEY_B)).status === 503)
    // The gateway stays responsive while bodies are held.
    expect((await call(`${fx.url}/v1/models`)).status).toBe(200)
    // Bytes are given back when the requests end.
    for (const socket of sockets.splice(0)) socket.destroy()
    await eventually(async () => (await post(KEY_A)).status === 200)
    expect(fx.mock.requests.every((r) => r.body.length > 800)).toBe(true)
  })
})

describe('limits.maxInFlightRequestBytes, bodies of unknown length', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], {
    limits: { maxRequestBytes: 1000, maxInFlightRequestBytes: 2500, maxInFlightRequestBytesPerOwner: 2000 },
  })

  it('counts a chunked body as it arrives and refuses the chunk that passes the total', async () => {
    const port = Number(new URL(fx.url).port)
    const open = async (head: string) => {
      const socket = net.connect(port, '127.0.0.1')
      await once(socket, 'connect')
      socket.on('error', () => {})
      let answer = ''
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString()
      })
      socket.write(head)
      return { socket, answer: () => answer }
    }
    const head = (key: string, framing: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`
    const held = [await open(`${head(KEY_A, 'Content-Length: 1000')}{"m`), await open(`${head(KEY_A, 'Content-Length: 1000')}{"m`)]
    // Both declared bodies are counted (2000 of 2500) before the chunked one starts.
    await eventually(async () => (await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })).status === 503)
    const chunked = await open(head(KEY_B, 'Transfer-Encoding: chunked'))
    chunked.socket.write(`12c\r\n${'x'.repeat(300)}\r\n`)
    chunked.socket.write(`12c\r\n${'x'.repeat(300)}\r\n`)
    await eventually(() => chunked.answer().startsWith('HTTP/1.1 503'))
    expect(chunked.answer()).toMatch(/retry-after: 1/i)
    for (const { socket } of [...held, chunked]) socket.destroy()
    await eventually(async () => (await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_B), body: chatBody() })).status === 200)
  })
})

/** A raw client that declares a body of `length` bytes, sends `sent` of it and waits; its answer as it comes. */
async function upload(url: string, key: string, length: number, sent: string) {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1')
  await once(socket, 'connect')
  socket.on('error', () => {})
  let answer = ''
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString()
  })
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${sent}`,
  )
  return { socket, answer: () => answer }
}

describe('limits.maxInFlightRequestBytes, idle connections declaring large bodies', () => {
  const MiB = 1024 * 1024
  const owners = ['a', 'b', 'c', 'd', 'e']
  // Every request the gateway has started, to know when it is reading each idle body (listening for its data).
  const started: IncomingMessage[] = []
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], {
    // The defaults: four owners' shares make the total.
    limits: { maxRequestBytes: 64 * MiB, maxInFlightRequestBytes: 1024 * MiB, maxInFlightRequestBytesPerOwner: 256 * MiB },
    auth: {
      authenticate: (key, req) => {
        started.push(req)
        return owners.includes(key) ? { owner: key } : null
      },
    },
  })
  const sockets: net.Socket[] = []
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy()
  })

  it('hold only the bytes they sent: another owner’s small call succeeds while they hang', async () => {
    const idle = []
    for (const key of owners.slice(0, 4)) {
      for (let i = 0; i < 4; i++) idle.push(await upload(fx.url, key, 64 * MiB, '{"model":"'))
    }
    sockets.push(...idle.map(({ socket }) => socket))
    await eventually(() => started.length === 16 && started.every((req) => req.listenerCount('data') > 0))
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer('e'), body: chatBody() })
    expect(res.status).toBe(200)
    // The idle owners' own small calls fit their shares too.
    expect((await call(`${fx.url}/v1/chat/completions`, { headers: bearer('a'), body: chatBody() })).status).toBe(200)
    expect(idle.every(({ answer }) => answer() === '')).toBe(true)
  })
})

describe('limits.maxInFlightRequestBytes, bytes that arrive', () => {
  const MiB = 1024 * 1024
  const started: IncomingMessage[] = []
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number], {
    limits: { maxRequestBytes: 4 * MiB, maxInFlightRequestBytes: 8 * MiB, maxInFlightRequestBytesPerOwner: 6 * MiB },
    auth: {
      authenticate: (key, req) => {
        started.push(req)
        return { owner: key }
      },
    },
  })
  const sockets: net.Socket[] = []
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy()
  })

  it('refuses past an owner’s share and past the total, counting the bytes actually uploaded', async () => {
    const sent = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"'.padEnd(3 * MiB, 'x')
    const held = [await upload(fx.url, KEY_A, 4 * MiB, sent), await upload(fx.url, KEY_A, 4 * MiB, sent)]
    sockets.push(...held.map(({ socket }) => socket))
    // The gateway has read both uploads' 3 MiB (a request emits what its socket reads at once).
    await eventually(() => started.length === 2 && started.every((req) => req.socket.bytesRead > 3 * MiB))
    const post = (key: string) => call(`${fx.url}/v1/chat/completions`, { headers: bearer(key), body: chatBody() })
    // A's 6 MiB share is full of bytes that arrived: A's next call is refused, B's fits the total.
    const refused = await post(KEY_A)
    expect(refused.status).toBe(503)
    expect(refused.json.error.code).toBe('overloaded')
    expect((await post(KEY_B)).status).toBe(200)
    // B's 3 MiB upload would take the total past 8 MiB: refused at the bytes that pass it.
    const over = await upload(fx.url, KEY_B, 4 * MiB, sent)
    sockets.push(over.socket)
    await eventually(() => over.answer().startsWith('HTTP/1.1 503'))
    expect(over.answer()).toMatch(/retry-after: 1/i)
    expect(held.every(({ answer }) => answer() === '')).toBe(true)
    for (const socket of sockets.splice(0)) socket.destroy()
    await eventually(async () => (await post(KEY_A)).status === 200)
  })
})
