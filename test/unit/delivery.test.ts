import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { type DeliveryOutcome, DeliveryWatch } from '../../src/http/delivery.js'

/** A server whose handler waits for the test to say when and what to answer, watching each response. */
async function watchedServer() {
  const seen: Array<{ watch: DeliveryWatch; res: http.ServerResponse; gone: number }> = []
  const server = http.createServer((_req, res) => {
    const entry = { watch: new DeliveryWatch(res), res, gone: 0 }
    entry.watch.onGone(() => entry.gone++)
    seen.push(entry)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const next = async () => {
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    return seen.shift() as (typeof seen)[number]
  }
  return { server, port: (server.address() as AddressInfo).port, next }
}

/** A raw client that sends a request and waits, so the test decides when it leaves (`socket.destroy()`). */
function requestThenWait(port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  return socket
}

describe('DeliveryWatch', () => {
  it('settles "write failed: ECONNRESET" when the client read part of a large response and reset (Node 20 still emits finish)', async () => {
    const { server, port, next } = await watchedServer()
    const socket = requestThenWait(port)
    let read = 0
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length
      // Reads a little, then stops reading and resets, as a client that crashed mid-download.
      if (read > 128 * 1024 && !socket.destroyed) {
        socket.pause()
        setTimeout(() => socket.resetAndDestroy(), 50)
      }
    })
    const entry = await next()
    entry.res.end(Buffer.alloc(32 * 1024 * 1024, 97))
    // Node 20 and 22 report such a response finished all the same (24 does not): the watch must not believe it.
    expect(await entry.watch.settled()).toEqual<DeliveryOutcome>({ delivered: false, reason: 'write failed: ECONNRESET' })
    server.close()
  })

  it('settles delivered when the response finishes, and never calls onGone', async () => {
    const { server, port, next } = await watchedServer()
    const response = fetch(`http://127.0.0.1:${port}/`)
    const entry = await next()
    entry.res.end('ok')
    expect(await (await response).text()).toBe('ok')
    expect(await entry.watch.settled()).toEqual<DeliveryOutcome>({ delivered: true })
    expect(entry.watch.clientGone).toBe(false)
    expect(entry.gone).toBe(0)
    server.close()
  })

  it('settles "context canceled" when the client leaves first, calls onGone once, and stays so after a late write', async () => {
    const { server, port, next } = await watchedServer()
    const socket = requestThenWait(port)
    const entry = await next()
    socket.destroy()
    expect(await entry.watch.settled()).toEqual<DeliveryOutcome>({ delivered: false, reason: 'context canceled' })
    entry.res.end('too late')
    expect(entry.watch.clientGone).toBe(true)
    expect(entry.gone).toBe(1)
    // A listener added after the fact is told at once; a stopped one never.
    let late = 0
    entry.watch.onGone(() => late++)
    expect(late).toBe(1)
    server.close()
  })

  it('stops calling a listener whose watch was stopped', async () => {
    const { server, port, next } = await watchedServer()
    const socket = requestThenWait(port)
    const entry = await next()
    let calls = 0
    const stop = entry.watch.onGone(() => calls++)
    stop()
    socket.destroy()
    await entry.watch.settled()
    expect(calls).toBe(0)
    expect(entry.gone).toBe(1)
    server.close()
  })
})
