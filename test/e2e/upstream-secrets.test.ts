import { describe, expect, it } from 'vitest'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, KEY_A, UPSTREAM_KEY, useFixture } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { useScriptedGateway } from '../support/scripted-gateway.js'
import { NODE_KINDS } from '../support/servers.js'

const NODE = NODE_KINDS[0] as (typeof NODE_KINDS)[number]

describe('the gateway’s upstream key', () => {
  const fx = useFixture(NODE)
  const chat = (mock: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('hi', { ...extra, mock }) })

  it('is taken out of an upstream error body that echoes it, and out of its headers', async () => {
    const res = await chat({
      status: 429,
      error_body: { error: { message: `rate limited for key ${UPSTREAM_KEY}` } },
      headers: { 'retry-after': UPSTREAM_KEY },
    })
    expect(res.status).toBe(429)
    expect(res.text).toBe('{"error":{"message":"rate limited for key [redacted]"}}')
    expect(res.headers['retry-after']).toBe('[redacted]')
    const gem = await call(`${fx.url}${gpath(false)}`, {
      headers: goog(KEY_A),
      body: geminiBody('hi', { mock: { status: 400, error_body: `bad ${UPSTREAM_KEY}` } }),
    })
    expect(gem.text).toBe('bad [redacted]')
  })

  it('is taken out of a 2xx answer, delivered or kept as a record', async () => {
    const delivered = await chat({ content: `the key is ${UPSTREAM_KEY}` })
    expect(delivered.json.choices[0].message.content).toBe('the key is [redacted]')
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('keep', { mock: { delay_ms: 200, content: `kept ${UPSTREAM_KEY}` } })),
      afterMs: 30,
    })
    const list = await eventually(async () => {
      const l = (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return l.count === 1 ? l : undefined
    })
    const record = (await call(`${fx.url}/v1/recoveries/${list.items[0].request_id}`, { headers: bearer(KEY_A) })).json
    expect(record.response.body_raw).toContain('kept [redacted]')
    expect(JSON.stringify(record.response)).not.toContain(UPSTREAM_KEY)
  })

  it.each([401, 403])('refused by the upstream (%i) is the operator’s 502, logged without the key', async (status) => {
    const res = await chat({ status })
    expect(res.status).toBe(502)
    expect(res.json.error).toMatchObject({ code: 'upstream_auth_failed', type: 'api_error' })
    const gem = await call(`${fx.url}${gpath(true)}`, { headers: goog(KEY_A), body: geminiBody('hi', { mock: { status } }) })
    // Google's shape has no 502: the same error is its 503 UNAVAILABLE.
    expect(gem.status).toBe(503)
    expect(gem.json).toEqual({ error: { code: 503, message: expect.any(String), status: 'UNAVAILABLE' } })
    const line = fx.logs.find((log) => log.level === 'error' && log.meta?.requestId === res.headers['x-request-id'])
    expect(line?.message).toContain('refused the gateway')
    expect(line?.meta).toMatchObject({ upstream: 'mock', status })
    expect(JSON.stringify(fx.logs)).not.toContain(UPSTREAM_KEY)
  })
})

describe('the gateway’s upstream key in a stream', () => {
  const sg = useScriptedGateway({ apiKey: UPSTREAM_KEY })

  it('is taken out even when the upstream splits it across chunks', async () => {
    const text = `data: {"echo":"${UPSTREAM_KEY}"}\n\ndata: [DONE]\n\n`
    for (const cut of [10, 17, 20, 30]) {
      sg.upstream.script([Buffer.from(text.slice(0, cut)), Buffer.from(text.slice(cut))])
      const res = await call(`${sg.url}/v1/chat/completions`, {
        headers: bearer(KEY_A),
        body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] },
      })
      expect(res.text, `cut at ${cut}`).toBe('data: {"echo":"[redacted]"}\n\ndata: [DONE]\n\n')
    }
  })
})
