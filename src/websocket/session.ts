// One client's WebSocket: its frames in, one response at a time, each response's events out as frames. A response
// is a background call (src/background/): the gateway runs it, keeps its events by id and meters it as any call, so
// a socket that goes mid-response loses nothing — the response runs on and is kept.
import type { IncomingMessage } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { WebSocket } from 'ws'
import { firstOfRequest, NO_REPEAT, runBodyOf, startBackgroundRun } from '../background/create.js'
import type { RunLog } from '../background/run-log.js'
import { hasEnded } from '../background/state.js'
import { buildCallSpec } from '../call/build-call-spec.js'
import type { CallSpec } from '../call/call-spec.js'
import type { BackgroundFormat } from '../dialects/index.js'
import type { SocketCreate, WebSocketFormat } from '../dialects/websocket-format.js'
import { isGatewayError, STATUS_BY_CODE } from '../errors.js'
import type { CallRoute } from '../http/dispatch.js'
import { newRequestId } from '../http/request-id.js'
import type { Match } from '../http/router.js'
import { editMembers } from '../json/top-members.js'
import type { Runtime } from '../runtime.js'
import { eventData } from '../sse/parse.js'
import { type Carried, type Continuable, jsonBytes, keepContext, readContext } from './context.js'
import type { SocketBounds } from './options.js'
import { type CutResponse, keepCutResponse } from './record.js'

/** The close codes a socket ends with (docs/guides/responses.md#websocket). */
export const CLOSE_CODES = {
  /** The socket lived `maxConnectionMs`: connect again and continue from the last response's id. */
  lifetime: 1000,
  /** The gateway shuts down (`gateway.close()`). */
  shutdown: 1001,
  /** A frame the socket cannot take (binary). */
  unsupported: 1003,
} as const

/** Why the gateway cut a socket, as the record of a response it then did not take says (`interrupted_reason`). */
export const CUT_REASONS = {
  /** It answered no ping within `pingIntervalMs`. */
  silent: 'write failed: ETIMEDOUT',
  /** It left more than `maxBufferedBytes` of frames untaken. */
  unread: 'write failed: ENOBUFS',
} as const

/** The last response, or only its ids and size when its conversation is past `maxConversationBytes` (not kept). */
type Last = Continuable | (Omit<Continuable, 'items'> & { items: undefined })

/** Where a socket was accepted: its owner and route, resolved from its upgrade request. */
export interface SocketPlace {
  rt: Runtime
  req: IncomingMessage
  owner: string
  match: Match
  call: CallRoute
  format: WebSocketFormat
  background: BackgroundFormat
  bounds: SocketBounds
}

/** An error frame's facts, from what a create threw. */
function factsOf(rt: Runtime, error: unknown) {
  if (isGatewayError(error)) {
    const code = error.code === 'invalid_options' ? 'internal_error' : error.code
    return { status: error.status ?? STATUS_BY_CODE[code], code, message: error.message, param: error.param }
  }
  rt.options.logger.error('model-gateway: unexpected error on a WebSocket', { error: error instanceof Error ? error.stack : String(error) })
  return { status: 500, code: 'internal_error', message: 'The gateway failed to handle this response.', param: undefined }
}

/** One accepted socket. */
export class ResponsesSocket {
  /** The response being answered; a create while it runs is refused. */
  #busy = false
  /** The last response, which a continuation naming its id carries on from. */
  #last: Last | undefined
  /** Frames handed to `ws` and not yet written to the connection; a response is delivered once none is left. */
  #unwritten = 0
  #writeFailed = false
  /** Told when no frame is left unwritten, or the socket closed. */
  #onWritten: Array<() => void> = []
  /** Set when the gateway cut the socket: the reason a response it did not take is kept with. */
  #cutReason: string | undefined
  /** The create being answered, to its response's end: a socket that goes meanwhile keeps its items after it. */
  #current: Promise<void> = Promise.resolve()
  /** What responses do once their last frame went (their last state written, a record of one not delivered). */
  readonly #tails = new Set<Promise<void>>()
  /** Cleared by every pong; a socket still waiting at the next ping is cut. */
  alive = true
  #closing = false
  readonly #lifetime: NodeJS.Timeout
  /** Resolves once the socket closed and the last response's items were written for other sockets. */
  readonly done: Promise<void>

  constructor(
    readonly ws: WebSocket,
    readonly place: SocketPlace,
  ) {
    ws.on('pong', () => (this.alive = true))
    // A protocol error (a frame past maxFrameBytes, a bad frame) closes the socket with its code; nothing to throw.
    ws.on('error', () => {})
    ws.on('message', (data, isBinary) => this.#frame(data as Buffer, isBinary))
    ws.once('close', () => this.#wake())
    this.#lifetime = setTimeout(() => this.close(CLOSE_CODES.lifetime, 'connection lifetime reached'), place.bounds.maxConnectionMs)
    this.#lifetime.unref()
    this.done = new Promise<void>((resolve) => ws.once('close', resolve)).then(() => this.#closed())
  }

  /** Closes the socket with `code`: at once when idle, else once its response's last frame went. */
  close(code: number, reason: string): void {
    this.#closing = true
    if (!this.#busy) this.ws.close(code, reason)
    else this.#closeAfter = [code, reason]
  }

  #closeAfter: [number, string] | undefined

  /** Cuts the socket without a close frame; a response it did not take is kept with `reason`. */
  cut(reason: string): void {
    this.#cutReason ??= reason
    this.ws.terminate()
  }

  #send(data: Record<string, unknown> | string): void {
    if (this.ws.readyState !== this.ws.OPEN) return
    this.#unwritten++
    this.ws.send(typeof data === 'string' ? data : JSON.stringify(data), this.#written)
    // A client that takes nothing holds the gateway's memory: past the bound it is cut, and the response goes on.
    if (this.ws.bufferedAmount > this.place.bounds.maxBufferedBytes) {
      this.place.rt.options.logger.info?.('model-gateway: a WebSocket client took no frames past maxBufferedBytes; it was cut', {
        bufferedBytes: this.ws.bufferedAmount,
      })
      this.cut(CUT_REASONS.unread)
    }
  }

  readonly #written = (error?: Error | null) => {
    if (error) this.#writeFailed = true
    if (--this.#unwritten === 0) this.#wake()
  }

  #wake(): void {
    for (const wake of this.#onWritten.splice(0)) wake()
  }

  /** Whether every frame sent was written to the connection: waits for the last, or for the socket to close. */
  #delivered(): Promise<boolean> {
    const now = () => this.#unwritten === 0 && !this.#writeFailed && this.ws.readyState === this.ws.OPEN
    if (this.#unwritten === 0 || this.ws.readyState !== this.ws.OPEN) return Promise.resolve(now())
    return new Promise((resolve) => this.#onWritten.push(() => resolve(now())))
  }

  /** Answers with an error frame; the socket stays usable. */
  #refuse(status: number, code: string, message: string, param?: string): void {
    this.#send(this.place.format.errorFrame({ status, code, message, param }))
  }

  #frame(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.ws.close(CLOSE_CODES.unsupported, 'binary frames are not supported')
      return
    }
    const { format } = this.place
    if (this.#busy) {
      this.#refuse(409, 'response_in_progress', 'A response is already running on this socket; send the next once it has completed.')
      return
    }
    if (this.#closing) {
      this.#refuse(503, 'gateway_closed', 'The gateway is shutting down.')
      return
    }
    this.#busy = true
    this.#current = this.#create(data)
      .catch((error: unknown) => this.#send(format.errorFrame(factsOf(this.place.rt, error))))
      .finally(() => {
        this.#busy = false
        if (this.#closeAfter) this.ws.close(...this.#closeAfter)
      })
  }

  async #create(data: Buffer): Promise<void> {
    const { format } = this.place
    let frame: unknown
    try {
      frame = JSON.parse(data.toString('utf8'))
    } catch {
      return this.#refuse(400, 'invalid_json', 'A frame must be one JSON object.')
    }
    const create = format.read(frame)
    const carried: Carried | string | undefined =
      create.previousId === undefined ? { items: [], bytes: 2 } : await this.#carried(create.previousId)
    if (typeof carried !== 'object') {
      const shown = String(create.previousId).slice(0, 128)
      const message = `Previous response with id '${shown}' not found${carried ?? '.'}`
      return this.#refuse(400, 'previous_response_not_found', message, 'previous_response_id')
    }
    const input = carried.items.length === 0 ? create.input : [...carried.items, ...create.input]
    // The JSON of the whole is never made: the carried items' bytes are known, and the new ones' (a few) are added.
    const inputBytes = carried.bytes + jsonBytes(create.input)
    const requestId = newRequestId()
    const id = this.place.background.idOf(requestId)
    if (create.warmUp) {
      const events = format.warmUpEvents(id, create.request, Math.floor(Date.now() / 1000))
      for (const [seq, event] of events.entries()) this.#send({ type: event.type, sequence_number: seq, ...event })
      this.#keep(id, requestId, input, inputBytes)
      return
    }
    this.#writeFailed = false
    const { run, spec } = await this.#start(requestId, create, input)
    const sentAll = await this.#follow(run, create)
    // Sent to its end, its status and object are final. A socket that went meanwhile waits for its end (`#closed`).
    if (!sentAll) await run.ended
    const kept = run.status === 'completed' || run.status === 'incomplete'
    if (kept) {
      const output = format.outputOf(run.object)
      this.#keep(id, requestId, [...input, ...output], inputBytes + jsonBytes(output))
    }
    // The next create is taken at once: its client may send it as soon as it read the last frame, before the last
    // state's write to the store (a round trip to Redis) or the frames' reaching the connection is known.
    const cut = (): CutResponse => ({
      frame: { bytes: data, value: frame as Record<string, unknown> },
      events: run.events.map((_, seq) => run.event(seq)),
      frameOf: (event) => format.frameOf(event, create),
      object: format.shown(run.object, create),
      reason: this.#cutReason ?? 'context canceled',
    })
    const delivered = sentAll ? this.#delivered() : Promise.resolve(false)
    const tail = Promise.all([run.ended, delivered])
      .then(async ([, through]) => {
        if (kept && !through) await keepCutResponse(this.place.rt, spec, cut())
      })
      // Nobody waits for it to answer: an unexpected failure is logged, as on any socket.
      .catch((error: unknown) => factsOf(this.place.rt, error))
      .then(() => {})
    this.#tails.add(tail)
    void tail.finally(() => this.#tails.delete(tail))
  }

  /** Makes a response the socket's last: its items kept, unless past `maxConversationBytes`. */
  #keep(id: string, requestId: string, items: unknown[], bytes: number): void {
    this.#last = { id, requestId, items: bytes > this.place.bounds.maxConversationBytes ? undefined : items, bytes }
  }

  /**
   * The items a continuation of `previousId` carries: the socket's last response's, else those kept. Else why not,
   * as the end of the error's message.
   */
  async #carried(previousId: string): Promise<Carried | string | undefined> {
    const last = this.#last
    if (last?.id === previousId) {
      if (last.items) return last
      const { maxConversationBytes } = this.place.bounds
      return `: its conversation (${last.bytes} bytes) is past what this socket keeps (maxConversationBytes: ${maxConversationBytes}). Send the whole input again without previous_response_id.`
    }
    const requestId = this.place.background.requestIdOf(previousId)
    if (requestId === undefined) return undefined
    return readContext(this.place.rt, this.place.owner, requestId)
  }

  /** Starts the response as a background call (checked, bounded and metered as any create). */
  async #start(requestId: string, create: SocketCreate, input: unknown[]): Promise<{ run: RunLog; spec: CallSpec }> {
    const { rt, req, owner, match, call, format, background } = this.place
    const request = format.withInput(create.request, input)
    const sent = editMembers(request, background.run)
    const ex = { req, requestId, match, owner, path: call.route.path, startedAt: performance.now() }
    const spec = buildCallSpec(rt, ex, call, await runBodyOf(sent), NO_REPEAT)
    return { run: await startBackgroundRun(rt, ex, spec, background, firstOfRequest(background, requestId, request)), spec }
  }

  /**
   * Sends a response's events as they come, each as one text frame; resolves at its end or when the socket goes,
   * with whether every event was sent.
   */
  #follow(run: RunLog, create: SocketCreate): Promise<boolean> {
    const ws = this.ws
    return new Promise((resolve) => {
      let next = 0
      const finish = () => {
        stop()
        ws.off('close', finish)
        resolve(hasEnded(run.status) && next >= run.events.length && ws.readyState === ws.OPEN)
      }
      const flush = () => {
        while (next < run.events.length && ws.readyState === ws.OPEN) {
          for (const data of eventData(run.event(next++))) this.#send(this.place.format.frameOf(data, create))
        }
        if (ws.readyState !== ws.OPEN || (hasEnded(run.status) && next >= run.events.length)) finish()
      }
      const stop = run.follow(Number.MAX_SAFE_INTEGER, { event: flush, end: flush })
      ws.on('close', finish)
      flush()
    })
  }

  async #closed(): Promise<void> {
    clearTimeout(this.#lifetime)
    // A response still running goes on: its items are kept once it ended.
    await this.#current
    await Promise.all(this.#tails)
    const last = this.#last
    if (last?.items) await keepContext(this.place.rt, this.place.owner, { ...last, items: last.items })
  }
}
