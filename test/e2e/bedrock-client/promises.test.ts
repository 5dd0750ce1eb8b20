import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BedrockClientFixture, bedrockSdk, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'
import { KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { rawClient } from '../../support/raw-client.js'

// The gateway's promises on InvokeModel routes: an SDK retry joins the call it repeats (one upstream call), an
// Idempotency-Key answers its repeat, and a stream cut by its client is kept (found by its body too) and resumed in
// its own event-stream framing.

let fx: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture({ recovery: { streams: 'finish' } })
})
afterAll(() => fx.close())

const bearer = { authorization: `Bearer ${KEY_A}` }
const STREAM = (model: string) => `/model/${model}/invoke-with-response-stream`
const body = (text: string) => ({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 32, messages: [{ role: 'user', content: text }] })
const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker)).length
const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** The Anthropic events of an event-stream body, each frame's CRCs checked by the codec. */
function decodeFrames(bytes: Buffer): Array<{ type: string; delta?: { text?: string } }> {
  const events: Array<{ type: string; delta?: { text?: string } }> = []
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const message = codec.decode(bytes.subarray(at, at + length))
    expect(message.headers[':event-type']?.value).toBe('chunk')
    const { bytes: b64 } = JSON.parse(toUtf8(message.body)) as { bytes: string }
    events.push(JSON.parse(Buffer.from(b64, 'base64').toString('utf8')))
    at += length
  }
  return events
}

describe('retries and Idempotency-Key', () => {
  it('the bedrock SDK timing out and retrying (x-stainless-retry-count) gets its answer from one upstream call', async () => {
    const marker = 'bedrock sdk retry'
    fx.mock.steer(marker, { delay_ms: 2500 })
    const before = fx.usage.length
    const sdk = bedrockSdk(fx.url, KEY_A, 2).withOptions({ timeout: 1000 })
    const message = await sdk.messages.create({ model: MODELS.anthropic.id, max_tokens: 32, messages: [{ role: 'user', content: marker }] })
    expect(message.content[0]).toMatchObject({ type: 'text', text: `Echo: ${marker}` })
    expect(upstreamCalls(marker)).toBe(1)
    await eventually(() => fx.usage.length > before)
    fx.mock.steer(marker, undefined)
  })

  it('an Idempotency-Key repeat is answered from the first call', async () => {
    const headers = { ...bearer, 'idempotency-key': 'bedrock-key-1' }
    const url = `${fx.url}/model/${MODELS.openai.id}/invoke`
    const first = await call(url, { headers, body: body('idempotent bedrock') })
    const again = await call(url, { headers, body: body('idempotent bedrock') })
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('idempotent bedrock')).toBe(1)
  })
})

describe('a stream its client cut', () => {
  it('is kept, found by its body, and resumed through /v1/recoveries/{id}/stream as event-stream frames', async () => {
    const marker = 'cut bedrock stream'
    fx.mock.steer(marker, { chunks: 10, chunk_delay_ms: 40 })
    const client = rawClient(fx.url, STREAM(MODELS.bedrock.id), body(marker), KEY_A)
    const requestId = await client.requestId()
    await client.readAtLeast(400)
    client.socket.destroy()
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer })
      return res.status === 200 ? res.json : undefined
    }, 10_000)
    expect(record.request.endpoint).toBe('bedrock.invoke')
    const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer, body: body(marker) })
    expect(lookup.json.items.map((item: { request_id: string }) => item.request_id)).toEqual([requestId])
    const resumed = await fetch(`${fx.url}/v1/recoveries/${requestId}/stream`, { headers: bearer })
    expect(resumed.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const events = decodeFrames(Buffer.from(await resumed.arrayBuffer()))
    expect(events[0]?.type).toBe('message_start')
    expect(events.at(-1)?.type).toBe('message_stop')
    expect(events.map((e) => e.delta?.text ?? '').join('')).toBe(`Echo: ${marker}`)
    fx.mock.steer(marker, undefined)
  })
})
