import http from 'node:http'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect } from 'vitest'
import { startMockUpstream as startMockUntyped } from './mock-upstream/index.mjs'

/** A request as the mock recorded it. */
export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}
/** The running mock, as its tests see it. */
export interface MockUpstream {
  url: string
  port: number
  requests: RecordedRequest[]
  abortedStreams: number
  completedCalls: number
  resetRequests(): void
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}
/** What `startMockUpstream` accepts. */
export interface MockUpstreamOptions {
  port?: number
  host?: string
  delayMs?: number
  apiKey?: string
  record?: boolean
}
/** `startMockUpstream`, typed as its tests rely on it. */
export const startMockUpstream = startMockUntyped as (options?: MockUpstreamOptions) => Promise<MockUpstream>

/** The mock module's own path, to run it as a script. */
export const SCRIPT = fileURLToPath(new URL('../../examples/mock-upstream.mjs', import.meta.url))

/** The current test's mock: a live binding, so test bodies always read the one `useFreshMock` started for them. */
export let mock: MockUpstream
const extra: MockUpstream[] = []

/** Gives every test of the calling file a mock of its own, closed after it with any `startExtra` ones. */
export function useFreshMock(): void {
  beforeEach(async () => {
    mock = await startMockUpstream()
  })
  afterEach(async () => {
    await mock.close()
    for (const m of extra.splice(0)) await m.close()
  })
}

/** A second mock with other options, closed after the test. */
export async function startExtra(options: MockUpstreamOptions): Promise<MockUpstream> {
  const m = await startMockUpstream(options)
  extra.push(m)
  return m
}

/** POSTs `body` (JSON unless already a string) to the current mock, or to `base`. */
export function post(path: string, body: unknown, init: RequestInit = {}, base = mock.url): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: init.signal ?? null,
  })
}

/** A chat-completions body ending in a user message `content`. */
export function chat(extraFields: Record<string, unknown> = {}, content = 'hello world') {
  return { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content }], ...extraFields }
}

/** A generate-content body with one user `text`. */
export function gemini(extraFields: Record<string, unknown> = {}, text = 'hello gemini') {
  return { contents: [{ role: 'user', parts: [{ text }] }], ...extraFields }
}

/** The Gemini route answering whole. */
export const GEN = '/v1beta/models/gemini-2.5-flash:generateContent'
/** The Gemini route streaming server-sent events. */
export const STREAM_SSE = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
/** The Gemini route streaming a JSON array. */
export const STREAM_ARRAY = '/v1beta/models/gemini-2.5-flash:streamGenerateContent'

/** Split an OpenAI SSE body into its data payloads (all frames end with \n\n). */
export function openaiFrames(text: string): string[] {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true)
      return f.slice(6)
    })
}

/** Split a Gemini SSE body (frames end with \r\n\r\n) into parsed objects. */
export function geminiFrames(text: string): any[] {
  expect(text.endsWith('\r\n\r\n')).toBe(true)
  return text
    .slice(0, -4)
    .split('\r\n\r\n')
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true)
      return JSON.parse(f.slice(6))
    })
}

/** Raw node:http request resolving with the response and every 'data' chunk with its arrival time. */
export function rawRequest(path: string, body: unknown): Promise<{ res: http.IncomingMessage; chunks: { t: number; s: string }[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request(mock.url + path, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: { t: number; s: string }[] = []
      res.setEncoding('utf8')
      res.on('data', (s: string) => chunks.push({ t: Date.now(), s }))
      res.on('end', () => resolve({ res, chunks }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}
