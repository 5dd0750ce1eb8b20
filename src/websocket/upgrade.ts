// The upgrade of a route's WebSocket mode: matched by the router as the route's create, authenticated from the
// upgrade request (a refusal is the route's HTTP error, before switching protocols), then handed to `ws`.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { Dialect } from '../dialects/index.js'
import { GatewayError, isGatewayError, STATUS_BY_CODE } from '../errors.js'
import { createAuthenticator } from '../http/auth.js'
import { newRequestId } from '../http/request-id.js'
import { matchRequest } from '../http/router.js'
import type { Runtime } from '../runtime.js'
import type { SocketBounds } from './options.js'
import { CLOSE_CODES, CUT_REASONS, ResponsesSocket, type SocketPlace } from './session.js'

/** The sockets of one gateway: accepted by its upgrade handlers, pinged while open, closed by `gateway.close()`. */
export class SocketSessions {
  readonly #open = new Set<ResponsesSocket>()
  readonly #authenticate: ReturnType<typeof createAuthenticator>
  #closing = false
  #pinger: NodeJS.Timeout | undefined
  #pingMs = Number.POSITIVE_INFINITY

  constructor(private readonly rt: Runtime) {
    this.#authenticate = createAuthenticator(rt.options.auth)
  }

  /** How many sockets are open. */
  get size(): number {
    return this.#open.size
  }

  /**
   * Takes an upgrade at `path` (the gateway's own, its prefix taken off): false when no route there has a WebSocket
   * mode. Answers the refusals itself: the route's error body, status and `connection: close`.
   */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, path: string, server: WebSocketServer, bounds: SocketBounds): boolean {
    // The router knows the route as the create it is over HTTP.
    const match = matchRequest('POST', path, false, req.headers)
    if (match?.route.kind !== 'call') return false
    const call = match.route
    const format = call.route.websocket
    const background = call.route.background
    if (!format || !background) return false
    const refuse = (error: GatewayError) => refuseUpgrade(socket, match.dialect, error)
    if (this.#closing) {
      refuse(new GatewayError('gateway_closed', 'The gateway is shutting down.'))
      return true
    }
    if (this.#open.size >= bounds.maxConnections) {
      refuse(new GatewayError('overloaded', `This gateway holds as many WebSockets as it may (maxConnections: ${bounds.maxConnections}).`))
      return true
    }
    const accept = (owner: string) => {
      server.handleUpgrade(req, socket, head, (ws) => {
        const place: SocketPlace = { rt: this.rt, req, owner, match, call, format, background, bounds }
        this.#add(new ResponsesSocket(ws, place), bounds.pingIntervalMs)
      })
    }
    const failed = (error: unknown) => {
      if (isGatewayError(error)) return refuse(error)
      this.rt.options.logger.error('model-gateway: an upgrade failed', { error: error instanceof Error ? error.stack : String(error) })
      refuse(new GatewayError('internal_error', 'The gateway failed to handle this request.'))
    }
    try {
      const presented = this.#authenticate(match.dialect.clientKey(req.headers, match.query), req, match.dialect)
      if (typeof presented === 'string') accept(presented)
      else presented.then(accept, failed)
    } catch (error) {
      failed(error)
    }
    return true
  }

  /** The `ws` server of one handler: no server of its own, compression on, frames bounded. */
  serverFor(bounds: SocketBounds): WebSocketServer {
    return new WebSocketServer({
      noServer: true,
      // Frames out are small events: a smaller window and memory level than zlib's defaults compress them about as
      // well, and cost an idle socket that has sent once a third of the deflate memory (bench part 20).
      perMessageDeflate: { serverMaxWindowBits: 13, zlibDeflateOptions: { memLevel: 7 } },
      maxPayload: bounds.maxFrameBytes ?? this.rt.options.limits.maxRequestBytes,
    })
  }

  #add(session: ResponsesSocket, pingMs: number): void {
    this.#open.add(session)
    void session.done.then(() => this.#open.delete(session))
    // One timer pings every socket, at the shortest interval any handler asked for.
    if (pingMs < this.#pingMs) {
      this.#pingMs = pingMs
      clearInterval(this.#pinger)
      this.#pinger = setInterval(() => this.#ping(), pingMs)
      this.#pinger.unref()
    }
  }

  #ping(): void {
    for (const session of this.#open) {
      // No pong since the last ping: a peer gone without a word (or one that reads nothing) holds nothing longer.
      if (!session.alive) {
        session.cut(CUT_REASONS.silent)
        continue
      }
      session.alive = false
      session.ws.ping()
    }
  }

  /**
   * Closes every socket with 1001 (`CLOSE_CODES.shutdown`): an idle one at once, one answering once its response
   * ended. Resolves once all are closed and the items their continuations carry are kept.
   */
  close(): Promise<void> {
    this.#closing = true
    clearInterval(this.#pinger)
    for (const session of this.#open) session.close(CLOSE_CODES.shutdown, 'the gateway is shutting down')
    return Promise.all([...this.#open].map((session) => session.done)).then(() => undefined)
  }

  /** Cuts every socket still open (past `close()`'s time). */
  terminate(): void {
    for (const session of this.#open) session.ws.terminate()
  }
}

/** Answers an upgrade with an HTTP error, in the route's error shape, and ends the connection. */
function refuseUpgrade(socket: Duplex, dialect: Dialect, error: GatewayError): void {
  if (socket.destroyed) return
  const code = error.code === 'invalid_options' ? 'internal_error' : error.code
  const status = error.status ?? STATUS_BY_CODE[code]
  const body = JSON.stringify(dialect.errorBody({ status, code, message: error.message, param: error.param, requestId: newRequestId() }))
  const head = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ]
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`)
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}
