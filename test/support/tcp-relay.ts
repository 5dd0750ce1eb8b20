import net from 'node:net'

/** A TCP relay on a loopback port in front of one server, which can cut every connection through it for a while. */
export interface TcpRelay {
  url: string
  /** Cuts every open connection and refuses new ones until `up()`: the server stays as it was, out of reach. */
  down(): void
  up(): void
  /** Holds back every reply of the server (its commands still reach it) until `release()`: a server slow to answer. */
  hold(): void
  release(): void
  close(): Promise<void>
}

/** Starts a relay to `host:port` with `scheme` in its url (`redis`): an outage that keeps the server's data. */
export async function startTcpRelay(scheme: string, host: string, port: number): Promise<TcpRelay> {
  const open = new Set<net.Socket>()
  const replies = new Map<net.Socket, net.Socket>()
  let cut = false
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy()
      return
    }
    const target = net.connect(port, host)
    for (const socket of [client, target]) {
      open.add(socket)
      socket.on('error', () => {})
      socket.once('close', () => {
        open.delete(socket)
        client.destroy()
        target.destroy()
      })
    }
    client.pipe(target)
    target.pipe(client)
    replies.set(target, client)
    target.once('close', () => replies.delete(target))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port: own } = server.address() as net.AddressInfo
  return {
    url: `${scheme}://127.0.0.1:${own}`,
    down() {
      cut = true
      for (const socket of open) socket.destroy()
    },
    up() {
      cut = false
    },
    hold() {
      for (const [target, client] of replies) {
        target.unpipe(client)
        target.pause()
      }
    },
    release() {
      for (const [target, client] of replies) target.pipe(client)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
