import { expect } from 'vitest'
import { geminiBody } from './bodies.js'
import { type Fixture, KEY_A } from './fixture.js'
import { call, type TestResponse } from './http.js'
import type { ServerKind } from './servers.js'

/** The Gemini model the fixture configures. */
export const MODEL = 'gemini-2.5-flash'

/** The two generate-content endpoints, for `it.each`. */
export const ENDPOINTS = [
  { method: 'generateContent', stream: false },
  { method: 'streamGenerateContent', stream: true },
] as const

/** The gateway path of a generate-content call, `?alt=sse` included for the stream. */
export const gpath = (stream: boolean, model = MODEL) =>
  `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`

/** The header the Google GenAI SDK sends its key in. */
export const goog = (key: string) => ({ 'x-goog-api-key': key })

/** A Google-shaped error body, as a matcher. */
export const googleError = (code: number, status: string) => ({ error: { code, message: expect.any(String), status } })

/** POSTs a small body to a path under the fixture sent exactly as written, `..` and `%2e%2e` included. */
export function rawPost(fx: Fixture, path: string): Promise<TestResponse> {
  const base = new URL(fx.url)
  const target = { origin: base.origin, path: base.pathname.replace(/\/$/, '') + path }
  return call(target, { method: 'POST', headers: goog(KEY_A), body: geminiBody() })
}

/** A 404 from the gateway is Google-shaped; one without a request id can only be the host's, after `next()`. */
export function expectNotFound(kind: ServerKind, res: TestResponse): void {
  expect(res.status).toBe(404)
  if (res.headers['x-request-id'] !== undefined) expect(res.json).toEqual(googleError(404, 'NOT_FOUND'))
  else expect(kind.unknownPath).toBe('host')
}
