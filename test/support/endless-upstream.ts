import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** An OpenAI chat upstream whose streams never end, sent as fast as the gateway reads them. */
export interface EndlessUpstream {
  /** Base URL, without `/v1`. */
  url: string
  /** Bytes written to each stream so far, in the order the streams came. */
  written(): number[]
  /** Streams whose reader (the gateway) went away. */
  aborted(): number
  /** Lets streams held at `holdAt` bytes go on (endlessly). */
  release(): void
  close(): Promise<void>
}

/** Events written per turn of the event loop: streams take turns, so several grow side by side. */
const EVENTS_PER_TURN = 64

/**
 * Starts the upstream. Each stream is a run of `chat.completion.chunk` events of about 1 KB of content; with `holdAt`
 * it pauses once that many bytes were written, until `release()`, so that several streams are held at once before
 * any outgrows a bound. A request whose prompt says `finite` gets 20 events and `[DONE]` instead (to warm a process up).
 */
export async function startEndlessUpstream(options: { holdAt?: number } = {}): Promise<EndlessUpstream> {
  const written: number[] = []
  const waiting = new Set<() => void>()
  let released = options.holdAt === undefined
  let aborted = 0
  const content = 'x'.repeat(1000)
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      const finite = body.includes('finite')
      const slot = finite ? -1 : written.push(0) - 1
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.on('close', () => {
        if (!res.writableFinished) aborted++
      })
      let n = 0
      const event = () =>
        `data: {"id":"chatcmpl-endless","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"${content}${n++}"},"finish_reason":null}]}\n\n`
      if (finite) {
        for (let i = 0; i < 20; i++) res.write(event())
        res.end('data: [DONE]\n\n')
        return
      }
      const pump = () => {
        for (let i = 0; i < EVENTS_PER_TURN && !res.destroyed; i++) {
          if (!released && (written[slot] as number) >= (options.holdAt as number)) {
            waiting.add(pump)
            return
          }
          const text = event()
          written[slot] = (written[slot] as number) + text.length
          if (!res.write(text)) {
            res.once('drain', pump)
            return
          }
        }
        if (!res.destroyed) setImmediate(pump)
      }
      pump()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => [...written],
    aborted: () => aborted,
    release() {
      released = true
      for (const pump of waiting) setImmediate(pump)
      waiting.clear()
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
