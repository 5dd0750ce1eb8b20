// A real server in front of the mock upstream that answers for the keys a test names, as Anthropic answers a revoked
// or rate-limited key, and hands every other request to the mock as it came: the mock takes any key, so which key an
// answer is refused for is the test's to say.
import http from 'node:http'
import type { MockUpstream } from '../../src/testing/index.js'
import { listen } from './http.js'

/** Anthropic's error type for each status a key earns. */
const KEY_ERRORS: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error', 429: 'rate_limit_error' }

/** How the gate answers one key: a status and the headers that come with it (`retry-after`). */
export interface KeyRefusal {
  status: number
  headers?: Record<string, string>
}

/** The running gate: its base URL, the keys it refuses (the test sets them), and each key it refused, in order. */
export interface KeyGate {
  url: string
  refusals: Map<string, KeyRefusal>
  refused: string[]
  close(): Promise<void>
}

/** Starts a gate before `mock` on a loopback port; it reads the key from `x-api-key`. */
export async function startKeyGate(mock: MockUpstream): Promise<KeyGate> {
  const refusals = new Map<string, KeyRefusal>()
  const refused: string[] = []
  const server = http.createServer((req, res) => {
    const key = String(req.headers['x-api-key'])
    const refusal = refusals.get(key)
    if (refusal === undefined) {
      const onward = http.request(`${mock.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      req.pipe(onward)
      return
    }
    refused.push(key)
    req.resume()
    res.writeHead(refusal.status, { 'content-type': 'application/json', 'request-id': 'req_gate', ...refusal.headers })
    const error = { type: KEY_ERRORS[refusal.status] ?? 'invalid_request_error', message: `refused with ${refusal.status}` }
    res.end(JSON.stringify({ type: 'error', error, request_id: 'req_gate' }))
  })
  const { url, close } = await listen(server)
  return { url, refusals, refused, close }
}
