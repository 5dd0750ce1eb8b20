import Keyv from 'keyv'
import { afterEach, expect, it } from 'vitest'
import { requestBodyHash } from '../../src/json/hash.js'
import { geminiBody } from '../support/bodies.js'
import { bearer, KEY_A, startFixture, useFixture } from '../support/fixture.js'
import { goog, gpath, MODEL } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeMatrix, forwardedBody } from '../support/servers.js'

describeMatrix('Gemini recovery flow', (kind) => {
  const fx = useFixture(kind)
  afterEach(async () => {
    await call(`${fx.url}/v1/recoveries?all=true`, { method: 'DELETE', headers: bearer(KEY_A) })
  })
  const recoveries = async () => (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json

  it('keeps exactly one record for a generateContent call whose client left, found by list, lookup and detail', async () => {
    const body = geminiBody('prove it', { mock: { delay_ms: 300 } })
    const sent = JSON.stringify({ generationConfig: { temperature: 0.5 }, ...body }, null, 2)
    const before = fx.mock.completedCalls
    // `?key=` on purpose: the key must end up in neither the upstream request nor the record.
    await sendThenAbort(`${fx.url}${gpath(false)}?key=${KEY_A}`, { body: sent, afterMs: 30 })
    await fx.mock.waitFor(() => fx.mock.completedCalls > before)
    const list = await eventually(async () => {
      const l = await recoveries()
      return l.count === 1 ? l : undefined
    })
    const summary = list.items[0]
    expect(Object.keys(summary).sort()).toEqual(['created_at', 'interrupted_reason', 'request_body_hash', 'request_id'])
    expect(summary.interrupted_reason).toBe('context canceled')
    // The hash is of the body as sent: the model is in the path, not in the body, so it is not hashed.
    expect(summary.request_body_hash).toBe(requestBodyHash(sent))
    const lookup = (b: unknown) => call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: b })
    expect((await lookup({ ...body, generationConfig: { temperature: 0.5 } })).json).toEqual({ items: [summary] })
    expect((await lookup({ model: MODEL, generationConfig: { temperature: 0.5 }, ...body })).json).toEqual({ items: [] })

    const detail = await call(`${fx.url}/v1/recoveries/${summary.request_id}`, { headers: bearer(KEY_A) })
    expect(detail.status).toBe(200)
    const { request, response } = detail.json
    expect(request).toEqual({
      body_raw: forwardedBody(kind, sent),
      request_body_hash: summary.request_body_hash,
      path: `/v1beta/models/${MODEL}:generateContent`,
      endpoint: 'generateContent',
      model: MODEL,
    })
    const generated = JSON.parse(response.body_raw)
    expect(generated.candidates[0].content.parts[0].text).toBe('Echo: prove it')
    expect(generated.candidates[0].finishReason).toBe('STOP')
    expect(generated.usageMetadata.totalTokenCount).toBeGreaterThan(0)
    expect(generated.modelVersion).toBe(MODEL)
    expect(response.status).toBe(200)
    expect(response.content_type).toMatch(/^application\/json/)
    expect(response.response_body_size).toBe(Buffer.byteLength(response.body_raw, 'utf8'))
    expect(detail.text).not.toContain(KEY_A)
    expect(JSON.stringify(fx.mock.requests.at(-1))).not.toContain(KEY_A)
    expect((await recoveries()).count).toBe(1)
  })

  it('keeps nothing when the upstream answered a generateContent call with an error', async () => {
    const map = new Map()
    const own = await startFixture(kind, { store: new Keyv({ store: map }) })
    try {
      await sendThenAbort(`${own.url}${gpath(false)}`, {
        headers: goog(KEY_A),
        body: JSON.stringify(geminiBody('x', { mock: { delay_ms: 200, status: 500 } })),
        afterMs: 30,
      })
      await own.mock.waitFor(() => own.mock.completedCalls > 0)
      // close() drains the call: anything it was going to store is stored by then.
      await own.gateway.close()
      expect(map.size).toBe(0)
    } finally {
      await own.close()
    }
  })
})
