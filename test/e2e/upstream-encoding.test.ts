import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { createGateway } from '../../src/gateway.js'
import type { Gateway } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually, type MountedServer, sendThenAbort } from '../support/http.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { serve } from '../support/servers.js'

describe('compression between the gateway and its upstream', () => {
  let upstream: ScriptedUpstream
  let gateway: Gateway
  let server: MountedServer
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    gateway = createGateway({
      // A configured accept-encoding must not make the upstream compress.
      upstreams: { s: { type: 'openai', baseUrl: `${upstream.url}/v1`, headers: { 'Accept-Encoding': 'gzip, br' } } },
      models: [{ id: 'gpt-4o-mini', upstream: 's' }],
      auth: { apiKeys: [KEY_A] },
    })
    server = await serve(nodeHandler(gateway))
  })
  afterAll(async () => {
    await server.close()
    await gateway.close()
    await upstream.close()
  })

  const answer = '{"id":"c","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"héllo"}}]}'

  it('asks for identity whatever the configuration says', async () => {
    upstream.script([Buffer.from(answer)], { contentType: 'application/json' })
    await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(upstream.requests.at(-1)?.headers['accept-encoding']).toBe('identity')
  })

  it('decodes a gzip answer the upstream sent anyway, for the client and for the record', async () => {
    const zipped = gzipSync(Buffer.from(answer))
    upstream.script([zipped.subarray(0, 10), zipped.subarray(10)], {
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    })
    const res = await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(res.status).toBe(200)
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.text).toBe(answer)

    upstream.script([zipped], { contentType: 'application/json', headers: { 'content-encoding': 'gzip' }, gated: true })
    await sendThenAbort(`${server.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('kept')),
      afterMs: 30,
    })
    upstream.release()
    const list = await eventually(async () => {
      const l = (await call(`${server.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json
      return l.count === 1 ? l : undefined
    })
    const record = (await call(`${server.url}/v1/recoveries/${list.items[0].request_id}`, { headers: bearer(KEY_A) })).json
    expect(record.response.body_raw).toBe(answer)
    expect(record.response.response_body_size).toBe(Buffer.byteLength(answer))
  })

  it('decodes a gzip stream chunk by chunk', async () => {
    const events = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n'
    upstream.script([gzipSync(Buffer.from(events))], { headers: { 'content-encoding': 'gzip' } })
    const res = await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('s', { stream: true }) })
    expect(res.text).toBe(events)
  })

  it('answers 502 for an encoding it cannot read', async () => {
    upstream.script([Buffer.from('???')], { contentType: 'application/json', headers: { 'content-encoding': 'zstd-unknown' } })
    const res = await call(`${server.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })
    expect(res.status).toBe(502)
    expect(res.json.error.message).toContain("Content-Encoding 'zstd-unknown'")
  })
})
