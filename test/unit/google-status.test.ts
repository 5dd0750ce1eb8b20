import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GOOGLE_RPC_CODES, googleStatus } from '../../src/dialects/gemini/status.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'

let mock: MockUpstream
beforeAll(async () => {
  mock = await startMockUpstream()
})
afterAll(() => mock.close())

describe('one google.rpc.Code table', () => {
  it('names 501 UNIMPLEMENTED, as google.rpc.Code does', () => {
    expect(googleStatus(501)).toEqual({ code: 501, status: 'UNIMPLEMENTED' })
  })

  it.each(Object.keys(GOOGLE_RPC_CODES).map(Number))('the mock Gemini upstream names %i as the gateway does', async (status) => {
    const res = await fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], mock: { status } }),
    })
    expect(res.status).toBe(status)
    const body = (await res.json()) as { error: { code: number; status: string } }
    expect(body.error).toMatchObject(googleStatus(status))
  })
})
