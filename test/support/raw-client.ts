import net from 'node:net'
import { bearer } from './fixture.js'

/** A client on a raw socket, for clients that misbehave: it reads what it is told to and nothing more. */
export interface RawClient {
  socket: net.Socket
  /** Bytes read so far (head included). */
  read(): number
  /** The first response head's `x-request-id`, once the head arrived. */
  requestId(): Promise<string>
  /** The length of the first response, head and body (its `content-length`), once the head arrived. */
  firstLength(): Promise<number>
  /** Resolves when the socket closed. */
  closed: Promise<void>
  /** Sends one more request on the same connection. */
  send(path: string, body: unknown, key: string): void
  /** Resolves once at least `bytes` were read in all. */
  readAtLeast(bytes: number): Promise<void>
}

function requestText(prefix: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}): string {
  const head = [
    `${body === undefined ? 'GET' : 'POST'} ${prefix}${path} HTTP/1.1`,
    'host: gateway',
    `authorization: ${bearer(key).authorization}`,
  ]
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
  if (body === undefined) return `${head.join('\r\n')}\r\n\r\n`
  const text = JSON.stringify(body)
  head.push('content-type: application/json', `content-length: ${Buffer.byteLength(text)}`)
  return `${head.join('\r\n')}\r\n\r\n${text}`
}

/** Connects to the gateway at `url` (its prefix included) and sends one request; `body` undefined sends a GET. */
export function rawClient(url: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}): RawClient {
  const { port, pathname } = new URL(url)
  const prefix = pathname.replace(/\/$/, '')
  const socket = net.connect(Number(port), '127.0.0.1')
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  let read = 0
  let head = ''
  const waiters: Array<{ bytes: number; resolve: () => void }> = []
  let idWaiter: ((id: string) => void) | undefined
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length
    if (head.length < 4096) {
      head += chunk.subarray(0, 4096).toString('latin1')
      const id = /x-request-id: ([^\r\n]+)/i.exec(head)?.[1]
      if (id && idWaiter) {
        idWaiter(id)
        idWaiter = undefined
      }
    }
    for (const waiter of [...waiters]) {
      if (read >= waiter.bytes) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  })
  socket.write(requestText(prefix, path, body, key, headers))
  return {
    socket,
    read: () => read,
    requestId: () =>
      new Promise((resolve) => {
        const id = /x-request-id: ([^\r\n]+)/i.exec(head)?.[1]
        if (id) resolve(id)
        else idWaiter = resolve
      }),
    firstLength: async () => {
      await new Promise<void>((resolve) => {
        const check = () => (head.includes('\r\n\r\n') ? resolve() : setImmediate(check))
        check()
      })
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1])
      return head.indexOf('\r\n\r\n') + 4 + length
    },
    closed,
    send: (nextPath, nextBody, nextKey) => socket.write(requestText(prefix, nextPath, nextBody, nextKey)),
    readAtLeast: (bytes) =>
      new Promise((resolve) => {
        if (read >= bytes) resolve()
        else waiters.push({ bytes, resolve })
      }),
  }
}
