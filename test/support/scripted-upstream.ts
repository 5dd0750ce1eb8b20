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
  /** Sets the answer to the next requests. */
  script(pieces: Buffer[], options?: { gated?: boolean; contentType?: string; headers?: Record<string, string> }): void
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
  let credits = 0
  let wake: (() => void) | undefined
  const requests: ScriptedRequest[] = []

  const turn = async () => {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve))
    credits--
  }

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      const script = pieces
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', ...extraHeaders })
      res.flushHeaders()
      for (const piece of script) {
        if (gated) await turn()
        else await new Promise((resolve) => setImmediate(resolve))
        if (res.destroyed) return
        res.write(piece)
      }
      res.end()
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
      credits = 0
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
