import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { useScriptedGateway } from '../support/scripted-gateway.js'

describe('compression between the gateway and its upstream', () => {
  const sg = useScriptedGateway({ headers: { 'Accept-Encoding': 'gzip, br' } })

  const answer = '{"id":"c","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"héllo"}}]}'

  it('asks for identity whatever the configuration says', async () => {
    sg.upstream.script([Buffer.from(answer)], { contentType: 'application/json' })
    await call(`${sg.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(sg.upstream.requests.at(-1)?.headers['accept-encoding']).toBe('identity')
  })

  it('decodes a gzip answer the upstream sent anyway, for the client and for the record', async () => {
    const zipped = gzipSync(Buffer.from(answer))
    sg.upstream.script([zipped.subarray(0, 10), zipped.subarray(10)], {
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    })
    const res = await call(`${sg.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(res.status).toBe(200)
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.text).toBe(answer)

    sg.upstream.script([zipped], { contentType: 'application/json', headers: { 'content-encoding': 'gzip' }, gated: true })
    await sendThenAbort(`${sg.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('kept')),
      afterMs: 30,
    })
    sg.upstream.release()
    const list = await eventually(async () => {
      const l = (await call(`${sg.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return l.count === 1 ? l : undefined
    })
    const record = (await call(`${sg.url}/v1/recoveries/${list.items[0].request_id}`, { headers: bearer(KEY_A) })).json
    expect(record.response.body_raw).toBe(answer)
    expect(record.response.response_body_size).toBe(Buffer.byteLength(answer))
  })

  it('decodes a gzip stream chunk by chunk', async () => {
    const events = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n'
    sg.upstream.script([gzipSync(Buffer.from(events))], { headers: { 'content-encoding': 'gzip' } })
    const res = await call(`${sg.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('s', { stream: true }) })
    expect(res.text).toBe(events)
  })

  it('answers 502 for an encoding it cannot read', async () => {
    sg.upstream.script([Buffer.from('???')], { contentType: 'application/json', headers: { 'content-encoding': 'zstd-unknown' } })
    const res = await call(`${sg.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(res.status).toBe(502)
    expect(res.json.error.message).toContain("Content-Encoding 'zstd-unknown'")
  })
})
