import http from 'node:http'
import { Agent, type Dispatcher, request } from 'undici'

/** A response as the tests read it. */
export interface TestResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

const agent = new Agent({ keepAliveTimeout: 1000 })

/** One HTTP request from a real client; the body is sent as given (string) or as JSON (object). */
export async function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | Buffer | undefined
  if (typeof options.body === 'string' || Buffer.isBuffer(options.body)) body = options.body
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await request(url, { method: (options.method ?? (body === undefined ? 'GET' : 'POST')) as 'GET', headers, body, dispatcher: agent })
  return readResponse(response)
}

/** Reads an undici response whole; `json` is undefined when the body is not JSON. */
export async function readResponse(response: Dispatcher.ResponseData): Promise<TestResponse> {
  const text = await response.body.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.statusCode, headers: response.headers, text, json }
}

/**
 * Sends a request and destroys the connection once the request is fully sent and `afterMs` passed, the way a
 * client timeout or a CDN cut does. Resolves when the socket is closed.
 */
export function sendThenAbort(
  url: string,
  options: { headers?: Record<string, string>; body: string | Buffer; afterMs: number },
): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...options.headers }, agent: false })
    req.on('error', () => {})
    req.on('close', () => resolve())
    req.on('response', (res) => {
      // The answer came before the cut: the test expected an interruption, so make the failure obvious.
      res.resume()
      req.destroy(new Error('response arrived before the abort'))
    })
    req.end(options.body, () => setTimeout(() => req.destroy(), options.afterMs))
  })
}

/** Collects a streamed response as raw text. */
export function readStream(url: string, options: { headers?: Record<string, string>; body: unknown }): Promise<TestResponse> {
  return call(url, { method: 'POST', headers: options.headers, body: options.body })
}

/** Polls until `check` resolves truthy, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A loopback port nothing listens on (bound, then released), for "upstream unreachable" cases. */
export async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
