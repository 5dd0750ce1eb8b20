import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type BedrockClientFixture, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'
import { KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { rawClient } from '../../support/raw-client.js'
import { type AdminClient, connectAdmin, describeWithRedis, dropKeys, REDIS_URL, recommendedKeyv } from '../../support/redis.js'

// An event stream cut on one gateway and taken up on another sharing its Redis store: the second follows the first's
// journal, and writes it in the framing the call's own client got (InvokeModel's or Converse's AWS event-stream
// frames, which share a content type), not the default SSE.

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-bedrock-processes-${process.pid}-${Date.now().toString(36)}`
const bearer = { authorization: `Bearer ${KEY_A}` }
const STREAM = `/model/${MODELS.anthropic.id}/invoke-with-response-stream`
const body = (text: string) => ({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 32, messages: [{ role: 'user', content: text }] })
/** Slow enough that the call still runs on the first gateway when the second takes it up. */
const SLOW = { chunks: 40, chunk_delay_ms: 100 }
const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** The Anthropic events of an event-stream body, each frame's CRCs checked by the codec. */
function decodeFrames(bytes: Buffer): unknown[] {
  const events: unknown[] = []
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

/** The events of a kept stream's SSE text. */
const sseEvents = (raw: string) => [...raw.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] as string) as unknown)

await describeWithRedis('Bedrock event streams across gateways on one Redis', () => {
  let a: BedrockClientFixture
  let b: BedrockClientFixture
  let admin: AdminClient
  beforeAll(async () => {
    const options = { recovery: { streams: 'finish' as const } }
    ;[a, b] = await Promise.all([
      startBedrockClientFixture({ ...options, store: recommendedKeyv(RUN, REDIS_URL) }),
      startBedrockClientFixture({ ...options, store: recommendedKeyv(RUN, REDIS_URL) }),
    ])
    admin = await connectAdmin()
  })
  afterAll(async () => {
    await dropKeys(admin, `${RUN}*`)
    await admin.quit()
    await Promise.all([a.close(), b.close()])
  })

  /** Starts a slow stream on gateway A and cuts its client after its first bytes; its request id. */
  async function cutOnA(marker: string, headers: Record<string, string> = {}): Promise<string> {
    a.mock.steer(marker, SLOW)
    const client = rawClient(a.url, STREAM, body(marker), KEY_A, headers)
    const requestId = await client.requestId()
    await client.readAtLeast(400)
    client.socket.destroy()
    return requestId
  }

  const recordOn = (fx: BedrockClientFixture, requestId: string) =>
    eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${requestId}`, { headers: bearer })
      return res.status === 200 ? (res.json as { request: { endpoint: string }; response: { stream_raw: string } }) : undefined
    }, 15_000)

  it('an InvokeModel stream cut on A while it runs is resumed on B as event-stream frames, every event of the record', {
    timeout: 60_000,
  }, async () => {
    const requestId = await cutOnA('resume invoke elsewhere')
    const completed = a.mock.completedCalls
    const resumed = await fetch(`${b.url}/v1/recoveries/${requestId}/stream`, { headers: bearer })
    expect(resumed.status).toBe(200)
    // Followed from A's journal while the upstream still streams there, not replayed from a record.
    expect(a.mock.completedCalls).toBe(completed)
    expect(resumed.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const events = decodeFrames(Buffer.from(await resumed.arrayBuffer()))
    const record = await recordOn(b, requestId)
    expect(record.request.endpoint).toBe('bedrock.invoke')
    expect(events).toEqual(sseEvents(record.response.stream_raw))
    expect(events.at(-1)).toEqual({ type: 'message_stop' })
    expect(a.mock.requests.filter((r) => r.body.includes('resume invoke elsewhere'))).toHaveLength(1)
  })

  it('a ConverseStream cut on A while it runs is resumed on B in Converse frames, not InvokeModel chunks', {
    timeout: 60_000,
  }, async () => {
    const marker = 'resume converse elsewhere'
    a.mock.steer(marker, SLOW)
    const converse = { messages: [{ role: 'user', content: [{ text: marker }] }] }
    const client = rawClient(a.url, `/model/${MODELS.anthropic.id}/converse-stream`, converse, KEY_A)
    const requestId = await client.requestId()
    await client.readAtLeast(400)
    client.socket.destroy()
    const completed = a.mock.completedCalls
    const resumed = await fetch(`${b.url}/v1/recoveries/${requestId}/stream`, { headers: bearer })
    expect(a.mock.completedCalls).toBe(completed)
    expect(resumed.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const bytes = Buffer.from(await resumed.arrayBuffer())
    const events: Array<{ type: unknown; payload: { delta?: { text?: string } } }> = []
    for (let at = 0; at < bytes.length; at += bytes.readUInt32BE(at)) {
      const message = codec.decode(bytes.subarray(at, at + bytes.readUInt32BE(at)))
      events.push({ type: message.headers[':event-type']?.value, payload: JSON.parse(toUtf8(message.body)) })
    }
    expect(events[0]).toEqual({ type: 'messageStart', payload: { role: 'assistant' } })
    expect(events.at(-1)?.type).toBe('metadata')
    const deltas = events.filter((e) => e.type === 'contentBlockDelta')
    expect(deltas.map((e) => e.payload.delta?.text ?? '').join('')).toBe(`Echo: ${marker}`)
    expect((await recordOn(b, requestId)).request.endpoint).toBe('bedrock.converse')
  })

  it('a repeated Idempotency-Key on B follows the stream A runs, as event-stream frames', { timeout: 60_000 }, async () => {
    const key = { 'idempotency-key': 'bedrock-follow-elsewhere' }
    const requestId = await cutOnA('keyed invoke elsewhere', key)
    const completed = a.mock.completedCalls
    const again = await fetch(`${b.url}${STREAM}`, {
      method: 'POST',
      headers: { ...bearer, ...key, 'content-type': 'application/json' },
      body: JSON.stringify(body('keyed invoke elsewhere')),
    })
    expect(again.status).toBe(200)
    expect(a.mock.completedCalls).toBe(completed)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('x-request-id')).toBe(requestId)
    expect(again.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const events = decodeFrames(Buffer.from(await again.arrayBuffer()))
    const record = await recordOn(b, requestId)
    expect(events).toEqual(sseEvents(record.response.stream_raw))
    expect(b.mock.requests).toHaveLength(0)
  })
})
