import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocketServer } from 'ws'
import { GatewayError } from '../src/errors.js'
import { normalisePrefix, pathUnderPrefix } from '../src/http/router.js'
import type { Gateway } from '../src/types.js'
import { sessionsFor } from '../src/websocket/hook.js'
import { resolveSocketBounds, type UpgradeHandlerOptions } from '../src/websocket/options.js'

export type { UpgradeHandlerOptions } from '../src/websocket/options.js'

/** Options of `nodeHandler`. */
export interface NodeHandlerOptions {
  /** Mount path the gateway lives under, e.g. `/ai`; requests outside it are not the gateway's. @default '' */
  prefix?: string
}

/** A `(req, res, next?)` handler for `node:http` (and Connect-style stacks). */
export function nodeHandler(
  gateway: Gateway,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void {
  const prefix = normalisePrefix(options.prefix)
  return (req, res, next) => {
    let path = pathUnderPrefix(prefix, req.url ?? '/')
    if (path === undefined) {
      if (next) return next()
      path = '/' // outside the prefix with no one to pass to: answered with the gateway's 404, never routed
    }
    gateway.handle(req, res, { path, claimUnknown: !next }).then(
      (handled) => {
        if (!handled) next?.()
      },
      (error: unknown) => (next ? next(error) : res.destroy(error as Error)),
    )
  }
}

/**
 * An `upgrade` listener for the gateway's WebSocket modes (the Responses API's, which Codex uses with
 * `supports_websockets = true`): `server.on('upgrade', upgradeHandler(gateway))`, on the `http.Server` under
 * node:http, Express (`app.listen()` returns it) or Koa alike. Upgrades outside `prefix`, or on a path without a
 * WebSocket mode, are left to the server's other `upgrade` listeners; with none, the latter are answered 404.
 */
export function upgradeHandler(
  gateway: Gateway,
  options: UpgradeHandlerOptions = {},
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const bounds = resolveSocketBounds(options)
  const sessions = sessionsFor(gateway)
  if (!sessions) throw new GatewayError('invalid_options', 'upgradeHandler takes a gateway made by createGateway')
  // Made at the first upgrade: a handler wired and never used costs nothing.
  let server: WebSocketServer | undefined
  return (req, socket, head) => {
    const path = pathUnderPrefix(bounds.prefix, req.url ?? '/')
    if (path === undefined) return
    server ??= sessions.serverFor(bounds)
    if (sessions.handle(req, socket, head, path, server, bounds)) return
    // Not the gateway's: another `upgrade` listener of the server may take it; with none, nobody would answer.
    const listeners = (socket as Duplex & { server?: { listenerCount(event: string): number } }).server?.listenerCount('upgrade')
    if (listeners === 1) socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  }
}
