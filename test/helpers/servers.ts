import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import type { Gateway } from '../../src/gateway.js'

/** A host server with the gateway mounted; `url` already includes the mount path. */
export interface MountedServer {
  url: string
  close(): Promise<void>
}

/** One way of mounting the gateway in a real server. */
export interface ServerKind {
  name: string
  mount(gateway: Gateway): Promise<MountedServer>
}

/** Listens on port 0 and closes every socket on close, so no test hangs on keep-alive. */
export async function listen(server: http.Server, prefix: string): Promise<MountedServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** node:http servers: the gateway alone at `/`, and under `/ai` next to a host route. */
export const NODE_KINDS: ServerKind[] = [
  {
    name: 'node:http at /',
    mount: (gateway) => listen(http.createServer(nodeHandler(gateway)), ''),
  },
  {
    name: 'node:http at /ai',
    mount: (gateway) => {
      const handler = nodeHandler(gateway, { prefix: '/ai' })
      const server = http.createServer((req, res) =>
        handler(req, res, () => {
          res.statusCode = req.url === '/host' ? 200 : 404
          res.end(req.url === '/host' ? 'host route' : 'host 404')
        }),
      )
      return listen(server, '/ai')
    },
  },
]

/** Every server kind the end-to-end scenarios run through; other adapters add theirs here. */
export const SERVER_KINDS: ServerKind[] = [...NODE_KINDS]

/** Runs one block of scenarios once per server kind (like h3's describeMatrix). */
export function describeMatrix(title: string, body: (kind: ServerKind) => void): void {
  for (const kind of SERVER_KINDS) describe(`${title} [${kind.name}]`, () => body(kind))
}
