import { once } from 'node:events'
import type { Dispatcher } from 'undici'
import { afterEach, beforeEach, expect } from 'vitest'
import { type MockUpstream, type MockUpstreamOptions, startMockUpstream } from '../../src/testing/index.js'
import { chatBody, geminiBody } from './bodies.js'
import { type CallOptions, call, open, type TestResponse } from './http.js'

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

/** POSTs `body` (JSON unless already a string) as application/json to the current mock, or to `base`. */
export function post(
  path: string,
  body: unknown,
  options: Pick<CallOptions, 'headers' | 'signal'> = {},
  base = mock.url,
): Promise<TestResponse> {
  return call(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
    signal: options.signal,
  })
}

/** The same POST, resolved at the headers with the body left to read. */
export function postOpen(path: string, body: unknown, options: Pick<CallOptions, 'signal'> = {}): Promise<Dispatcher.ResponseData> {
  return open(mock.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: options.signal })
}

/**
 * The chat body of the mock's own tests: a system prompt before the user message, so every echo they check also
 * proves the mock answers the last user message. `extraFields` come first, as most of these tests only steer the mock.
 */
export const chat = (extraFields: Record<string, unknown> = {}, content = 'hello world') => chatBody(content, extraFields, 'be brief')
/** The generate-content body of the mock's own tests. */
export const gemini = (extraFields: Record<string, unknown> = {}, text = 'hello gemini') => geminiBody(text, extraFields)

/** The Gemini route answering whole. */
export const GEN = '/v1beta/models/gemini-2.5-flash:generateContent'
/** The Gemini route streaming server-sent events. */
export const STREAM_SSE = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
/** The Gemini route streaming a JSON array. */
export const STREAM_ARRAY = '/v1beta/models/gemini-2.5-flash:streamGenerateContent'

/** The data payloads of an SSE body whose events all end with `end` (each asserted to be one `data:` line). */
function ssePayloads(text: string, end: string): string[] {
  expect(text.endsWith(end)).toBe(true)
  return text
    .slice(0, -end.length)
    .split(end)
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true)
      return f.slice(6)
    })
}

/** Split an OpenAI SSE body into its data payloads (all frames end with \n\n). */
export const openaiFrames = (text: string): string[] => ssePayloads(text, '\n\n')

/** Split a Gemini SSE body (frames end with \r\n\r\n) into parsed objects. */
export const geminiFrames = (text: string): any[] => ssePayloads(text, '\r\n\r\n').map((f) => JSON.parse(f))

/** POSTs to the current mock, resolving with the status and every 'data' chunk with its arrival time. */
export async function rawRequest(path: string, body: unknown): Promise<{ status: number; chunks: { t: number; s: string }[] }> {
  const res = await postOpen(path, body)
  const chunks: { t: number; s: string }[] = []
  const utf8 = new TextDecoder()
  res.body.on('data', (bytes: Buffer) => chunks.push({ t: Date.now(), s: utf8.decode(bytes, { stream: true }) }))
  await once(res.body, 'end')
  return { status: res.statusCode, chunks }
}
