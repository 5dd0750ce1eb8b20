import http from 'node:http'

/** The SSE events of a text (each with its closing blank line); `data` events are those with a `data:` line. */
export function sseEvents(text: string): string[] {
  return text.match(/[\s\S]*?(?:\r?\n\r?\n)/g) ?? []
}

/** How many events of `text` carry data. */
export const dataEvents = (text: string) => sseEvents(text).filter((event) => /(^|\n)data:/.test(event)).length

/** A stream read up to a cut: the request id, the complete events received (as text) and how many carried data. */
export interface CutStream {
  requestId: string
  status: number
  received: string
  seen: number
}

/**
 * POSTs a streaming call and destroys the connection once `events` data events arrived, like a client whose network
 * broke. `received` ends on an event boundary (a partial event is dropped, as a resuming client would).
 */
export function cutAfterEvents(url: string, headers: Record<string, string>, body: unknown, events: number): Promise<CutStream> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false })
    req.on('error', () => {})
    req.on('response', (res) => {
      let text = ''
      const requestId = String(res.headers['x-request-id'])
      const finish = () => {
        const complete = sseEvents(text).join('')
        resolve({ requestId, status: res.statusCode ?? 0, received: complete, seen: dataEvents(complete) })
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        if (dataEvents(sseEvents(text).join('')) >= events) {
          req.destroy()
          finish()
        }
      })
      res.on('end', () => reject(new Error(`the stream ended before ${events} events: ${text}`)))
    })
    req.end(JSON.stringify(body))
  })
}
