import http from 'node:http'
import { listen } from './http.js'

/** One request the scripted upstream received. */
export interface ScriptedRequest {
  method: string
  /** The request target as received, query included. */
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** An upstream answering 200 with fixed byte pieces, one write each; gated pieces wait for `release()`. */
export interface ScriptedUpstream {
  url: string
  requests: ScriptedRequest[]
  /** Sets the answer to the next requests; `cut` resets the connection after the last piece instead of ending the answer. */
  script(pieces: Buffer[], options?: { gated?: boolean; contentType?: string; headers?: Record<string, string>; cut?: boolean }): void
  /** Lets the next gated piece be written. */
  release(): void
  close(): Promise<void>
}

/** Starts a scripted upstream on port 0: a test decides exactly how a stream is cut into chunks, and when. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let pieces: Buffer[] = []
  let gated = false
  let contentType = 'text/event-stream'
  let extraHeaders: Record<string, string> = {}
  let cut = false
  let credits = 0
  let wake: (() => void) | undefined
  /** Counts scripts: an answer of an earlier one still waiting for a turn (its call was stopped) never takes one. */
  let generation = 0
  const requests: ScriptedRequest[] = []

  /** Waits for the next piece's turn; false when a new script replaced the one this answer plays. */
  const turn = async (played: number) => {
    while (credits === 0 && played === generation) await new Promise<void>((resolve) => (wake = resolve))
    if (played !== generation) return false
    credits--
    return true
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      const script = pieces
      const cutting = cut
      const played = generation
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', ...extraHeaders })
      res.flushHeaders()
      for (const piece of script) {
        if (gated && !(await turn(played))) return
        else await new Promise((resolve) => setImmediate(resolve))
        if (res.destroyed) return
        // A cut waits for each piece to be flushed: a reset drops whatever the socket still holds.
        if (cutting) await new Promise((resolve) => res.write(piece, resolve))
        else res.write(piece)
      }
      // As an upstream that dies mid-stream: the chunked body never gets its end.
      if (cutting) res.socket?.destroy()
      else res.end()
    })
  })
  const { url, close } = await listen(server)
  return {
    url,
    requests,
    script(next, options = {}) {
      pieces = next
      gated = options.gated ?? false
      contentType = options.contentType ?? 'text/event-stream'
      extraHeaders = options.headers ?? {}
      cut = options.cut ?? false
      credits = 0
      generation++
      const waiting = wake
      wake = undefined
      waiting?.()
    },
    release() {
      credits++
      const w = wake
      wake = undefined
      w?.()
    },
    close,
  }
}
