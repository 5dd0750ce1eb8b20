// A raw `ws` client of the Responses WebSocket mode, as Codex speaks it: one socket, `response.create` frames, every
// frame kept in the order it came.
import type { IncomingMessage } from 'node:http'
import WebSocket from 'ws'

/** Frames that end a response (or refuse a create). */
const ENDINGS = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error'])

/** What the upgrade was answered, when it was not switched. */
export interface Refusal {
  status: number
  body: string
}

/** One socket to the gateway's `/v1/responses`. */
export class SocketClient {
  readonly frames: Record<string, any>[] = []
  readonly #waiters: Array<() => void> = []
  closed: { code: number; reason: string } | undefined

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString('utf8')))
      for (const wake of this.#waiters.splice(0)) wake()
    })
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString('utf8') }
      for (const wake of this.#waiters.splice(0)) wake()
    })
  }

  /** Opens a socket to `url` (an `http://…` base, the path is added) with `key`, as Codex does. */
  static open(url: string, key: string, headers: Record<string, string> = {}): Promise<SocketClient> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/responses`, {
      headers: { authorization: `Bearer ${key}`, 'openai-beta': 'responses_websockets=2026-02-06', ...headers },
      perMessageDeflate: true,
    })
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new SocketClient(ws)))
      ws.once('error', reject)
    })
  }

  /** The answer to an upgrade the gateway refuses (rejects if it switched protocols). */
  static refusal(url: string, headers: Record<string, string>): Promise<Refusal> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/responses`, { headers })
    return new Promise((resolve, reject) => {
      ws.once('open', () => reject(new Error('the upgrade was accepted')))
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      ws.once('error', () => {})
    })
  }

  /** Sends one `response.create` frame. */
  send(body: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ type: 'response.create', ...body }))
  }

  /** Waits for frames past `from` until one ends a response; returns them. */
  async until(from: number, ending = (frame: Record<string, any>) => ENDINGS.has(frame.type)): Promise<Record<string, any>[]> {
    for (;;) {
      const at = this.frames.slice(from).findIndex(ending)
      if (at !== -1) return this.frames.slice(from, from + at + 1)
      if (this.closed) throw new Error(`the socket closed (${this.closed.code}) before the response ended`)
      await new Promise<void>((resolve) => this.#waiters.push(resolve))
    }
  }

  /** Sends a create and returns its frames, to the one that ends it. */
  async create(body: Record<string, unknown>): Promise<Record<string, any>[]> {
    const from = this.frames.length
    this.send(body)
    return this.until(from)
  }

  /** Resolves once the socket closed. */
  async whenClosed(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    return this.closed
  }

  /** Closes the socket (normal closure) and waits for it. */
  async close(): Promise<void> {
    if (!this.closed) this.ws.close(1000)
    await this.whenClosed()
  }
}

/** The response object a response's frames end with. */
export const finalResponse = (frames: Record<string, any>[]) => frames.at(-1)?.response as Record<string, any>

/** The text of a response's message output. */
export function outputText(response: Record<string, any>): string {
  return (response.output as any[])
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content)
    .map((part: any) => part.text ?? '')
    .join('')
}
