import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { type CollectOptions, collectBody } from '../../src/http/collect-body.js'
import { DeadlineSweeper } from '../../src/http/deadlines.js'
import { readBody } from '../../src/http/read-body.js'

class TooLarge extends Error {}
class Broken extends Error {}

const options = (limit: number, extra: Partial<CollectOptions> = {}): CollectOptions => ({
  limit,
  afterOverflow: 'destroy',
  tooLarge: () => new TooLarge('too large'),
  broken: (cause) => new Broken('broken', { cause }),
  ...extra,
})

describe('collectBody', () => {
  it('joins the chunks of a stream', async () => {
    const body = await collectBody(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), options(10))
    expect(body.toString()).toBe('abcd')
  })

  it('copies into one buffer of the declared size, shorter when less arrived, unsized past it', async () => {
    expect((await collectBody(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), options(10, { expectedBytes: 4 }))).toString()).toBe(
      'abcd',
    )
    expect((await collectBody(Readable.from([Buffer.from('ab')]), options(10, { expectedBytes: 4 }))).toString()).toBe('ab')
    expect((await collectBody(Readable.from([Buffer.from('abc'), Buffer.from('def')]), options(10, { expectedBytes: 4 }))).toString()).toBe(
      'abcdef',
    )
    await expect(
      collectBody(Readable.from([Buffer.from('abc'), Buffer.from('defgh')]), options(6, { expectedBytes: 4 })),
    ).rejects.toBeInstanceOf(TooLarge)
  })

  it('rejects a body over the limit and destroys or drains the stream as asked', async () => {
    const destroyed = new PassThrough()
    const first = collectBody(destroyed, options(3))
    destroyed.write('abcd')
    await expect(first).rejects.toBeInstanceOf(TooLarge)
    expect(destroyed.destroyed).toBe(true)

    const drained = new PassThrough()
    const second = collectBody(drained, options(3, { afterOverflow: 'drain' }))
    drained.write('abcd')
    await expect(second).rejects.toBeInstanceOf(TooLarge)
    expect(drained.destroyed).toBe(false)
    drained.end('more')
    await once(drained, 'end')
  })

  it('rejects a stream that fails, closes early, or was already destroyed', async () => {
    const failing = new PassThrough()
    const failed = collectBody(failing, options(10))
    const cause = new Error('reset')
    failing.destroy(cause)
    expect(((await failed.catch((e: unknown) => e)) as Broken).cause).toBe(cause)

    const closing = new PassThrough()
    const closed = collectBody(closing, options(10))
    closing.write('ab')
    closing.destroy()
    await expect(closed).rejects.toBeInstanceOf(Broken)

    const gone = new PassThrough()
    gone.destroy()
    await expect(collectBody(gone, options(10))).rejects.toBeInstanceOf(Broken)
  })
})

describe('readBody on a real connection', () => {
  async function serverReading(limit: number) {
    const results: Array<Promise<Buffer>> = []
    const server = http.createServer((req, res) => {
      const read = readBody(req, { maxBytes: limit, maxDepth: 1000, deadline: new DeadlineSweeper(60_000) })
      results.push(read)
      read.then(
        (body) => res.end(`got ${body.length}`),
        (error: Error) => res.end(error.message),
      )
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return { server, port: (server.address() as AddressInfo).port, results }
  }

  it('answers 413 from a declared length alone, before any byte is read', async () => {
    const { server, port } = await serverReading(10)
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x'.repeat(11) })
    expect(await res.text()).toMatch(/larger than the limit of 10 bytes/)
    server.close()
  })

  it('says the client left when the connection closes mid-body', async () => {
    const { server, port, results } = await serverReading(1000)
    const socket = net.connect(port, '127.0.0.1')
    await once(socket, 'connect')
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly some')
    while (results.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    socket.destroy()
    await expect(results[0]).rejects.toThrow('The client closed the connection before sending the whole body.')
    server.close()
  })
})
