import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, type Dispatcher } from 'undici'

/** A test server on a loopback port; `url` includes any mount path. */
export interface MountedServer {
  url: string
  close(): Promise<void>
}

/** Listens on port 0 and closes every socket on close, so no test hangs on keep-alive. */
export async function listen(server: http.Server, prefix = ''): Promise<MountedServer> {
  // Far past the test client's idle time (below): on a loaded machine, a request sent on an idle connection the
  // server was closing at that moment was reset (ECONNRESET), a race of the test's own client, not the gateway's.
  server.keepAliveTimeout = 30_000
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

/** A response as the tests read it. */
export interface TestResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

/** Idle connections are kept 1 s at most, whatever the server's `Keep-Alive` hint: far below the server's (above). */
const agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 })

/** What a test request sends: the body as given (string or bytes) or as JSON (anything else). */
export interface CallOptions {
  method?: string
  headers?: Record<string, string>
  body?: unknown
  signal?: AbortSignal
}

/** A URL, or an origin and a path sent exactly as written: a URL would resolve `..` and `%2e%2e` first. */
export type Target = string | { origin: string; path: string }

/** One HTTP request from a real client, resolved once the headers are in; the body is left to the caller to read. */
export function open(target: Target, options: CallOptions = {}): Promise<Dispatcher.ResponseData> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | Buffer | undefined
  if (typeof options.body === 'string' || Buffer.isBuffer(options.body)) body = options.body
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const method = (options.method ?? (body === undefined ? 'GET' : 'POST')) as Dispatcher.HttpMethod
  const { origin, path } = typeof target === 'string' ? originAndPath(new URL(target)) : target
  return agent.request({ origin, path, method, headers, body, signal: options.signal })
}

const originAndPath = (url: URL) => ({ origin: url.origin, path: url.pathname + url.search })

/** One HTTP request from a real client, read whole. */
export async function call(target: Target, options: CallOptions = {}): Promise<TestResponse> {
  return readResponse(await open(target, options))
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

/** Polls until `check` resolves truthy, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A port nothing listens on: one the system gave, then closed. */
export async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
