import http from 'node:http'
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime'
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../../src/json/hash.js'
import { bearer, KEY_A } from '../../support/fixture.js'
import { call, eventually, sendThenAbort } from '../../support/http.js'
import { type ConverseGateway, converseClient, modelCalls, startConverseGateway } from './gateway.js'

// The gateway's promises on Converse calls: an answer whose client left is kept as a record in Converse's shape
// (found by its body hash), a stream cut by its client runs on and is resumed as event-stream frames, a retry joins
// the call still running, Idempotency-Key replays, usage is priced, and owner limits answer in Bedrock's shape.

let gw: ConverseGateway
beforeAll(async () => {
  gw = await startConverseGateway({
    recovery: { streams: 'finish' },
    pricing: { nova: { input: 1, output: 2 }, gpt: { input: 1, output: 2 } },
  })
})
afterAll(() => gw.close())

const AUTH = { ...bearer(KEY_A), 'content-type': 'application/json' }
const body = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: [{ text }] }] })
const callsWith = (text: string) => modelCalls(gw.mock).filter((r) => r.body.includes(text))
const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** The event-stream frames of `bytes`, each as its `:event-type` and JSON payload. */
function frames(bytes: Buffer): Array<{ type: string; payload: Record<string, unknown> }> {
  const out: Array<{ type: string; payload: Record<string, unknown> }> = []
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const message = codec.decode(bytes.subarray(at, at + length))
    out.push({ type: String(message.headers[':event-type']?.value), payload: JSON.parse(toUtf8(message.body)) })
    at += length
  }
  return out
}

/** A ConverseStream call whose client reads its first bytes and leaves: its request id. */
function cutStream(path: string, sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.url}${path}`, { method: 'POST', headers: AUTH, agent: false })
    req.on('error', () => {})
    req.on('response', (res) => {
      res.once('data', () => {
        resolve(String(res.headers['x-request-id']))
        req.destroy()
      })
    })
    req.on('close', () => reject(new Error('no bytes before the connection closed')))
    req.end(sent)
  })
}

const record = (id: string) =>
  eventually(async () => {
    const res = await call(`${gw.url}/v1/recoveries/${id}`, { headers: bearer(KEY_A) })
    return res.status === 200 ? (res.json as { request: Record<string, unknown>; response: { body_raw: string } }) : undefined
  })

describe('promises on Converse calls', () => {
  it.each(['nova', 'gpt'])('an answer of %s whose client left is kept in Converse’s shape, found by its body hash', async (model) => {
    const text = `keep me ${model}`
    gw.mock.steer(text, { delay_ms: 300 })
    const sent = body(text)
    const before = gw.mock.completedCalls
    await sendThenAbort(`${gw.url}/model/${model}/converse`, { headers: AUTH, body: sent, afterMs: 30 })
    await gw.mock.waitFor(() => gw.mock.completedCalls > before)
    const found = await eventually(async () => {
      const res = await call(`${gw.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: JSON.parse(sent) })
      return (res.json as { items: Array<{ request_id: string; request_body_hash: string }> }).items[0]
    })
    expect(found.request_body_hash).toBe(requestBodyHash(sent))
    const kept = await record(found.request_id)
    expect(kept.request).toMatchObject({ endpoint: 'bedrock.converse', model, path: `/model/${model}/converse` })
    const answer = JSON.parse(kept.response.body_raw)
    expect(answer).toMatchObject({
      output: { message: { role: 'assistant', content: [{ text: `Echo: ${text}` }] } },
      stopReason: 'end_turn',
    })
    expect(answer.usage.outputTokens).toBeGreaterThan(0)
  })

  it.each(['nova', 'gpt'])('a stream of %s cut by its client runs on; its record is the answer ConverseCommand gets', async (model) => {
    const text = `cut stream ${model}`
    gw.mock.steer(text, { chunks: 6, chunk_delay_ms: 30 })
    const id = await cutStream(`/model/${model}/converse-stream`, body(text))
    const kept = await record(id)
    // The kept stream assembled into the answer a ConverseCommand gets.
    expect(JSON.parse(kept.response.body_raw)).toMatchObject({ output: { message: { content: [{ text: `Echo: ${text}` }] } } })
  })

  it('on the wire: each frame an event of its `:event-type`, the JSON payload as is (no base64 wrapper)', async () => {
    const res = await fetch(`${gw.url}/model/gpt/converse-stream`, { method: 'POST', headers: AUTH, body: body('raw frames') })
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
    const events = frames(Buffer.from(await res.arrayBuffer()))
    expect(events.map((e) => e.type)).toEqual([
      'messageStart',
      ...events.slice(1, -3).map(() => 'contentBlockDelta'),
      'contentBlockStop',
      'messageStop',
      'metadata',
    ])
    expect(events[0]?.payload).toEqual({ role: 'assistant' })
    expect(events.at(-2)?.payload).toEqual({ stopReason: 'end_turn' })
    expect(events.at(-1)?.payload).toMatchObject({ usage: { inputTokens: expect.any(Number) }, metrics: { latencyMs: 0 } })
  })

  it.each(['live', 'kept'])(
    'a cut stream resumed through /v1/recoveries/{id}/stream (%s) comes as Converse event-stream frames',
    async (when) => {
      const text = `resume frames ${when}`
      gw.mock.steer(text, { chunks: 6, chunk_delay_ms: when === 'live' ? 120 : 10 })
      const id = await cutStream('/model/nova/converse-stream', body(text))
      // Live: followed while the upstream still streams (its log in this process); kept: replayed from its record.
      if (when === 'kept') await record(id)
      const resumed = await fetch(`${gw.url}/v1/recoveries/${id}/stream`, { headers: bearer(KEY_A) })
      expect(resumed.status).toBe(200)
      expect(resumed.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
      const events = frames(Buffer.from(await resumed.arrayBuffer()))
      // Converse's own event types, not InvokeModel's `chunk` frames, though both framings share a content type.
      expect(events[0]).toEqual({ type: 'messageStart', payload: { role: 'assistant' } })
      expect(events.map((e) => e.type)).toContain('contentBlockDelta')
      expect(events.at(-1)?.type).toBe('metadata')
      const deltas = events.filter((e) => e.type === 'contentBlockDelta')
      expect(deltas.map((e) => (e.payload.delta as { text?: string }).text ?? '').join('')).toBe(`Echo: ${text}`)
    },
  )

  it('a retry (x-stainless-retry-count) joins the call still running: one upstream call, the same answer', async () => {
    const text = 'retry joins converse'
    gw.mock.steer(text, { delay_ms: 300 })
    const attempt = (count: number) =>
      call(`${gw.url}/model/nova/converse`, {
        headers: { ...AUTH, 'x-stainless-retry-count': String(count) },
        body: JSON.parse(body(text)),
      })
    const first = attempt(0)
    await eventually(() => callsWith(text).length === 1)
    const [a, b] = await Promise.all([first, attempt(1)])
    expect(b.text).toBe(a.text)
    expect(b.headers['x-amzn-requestid']).toBe(a.headers['x-amzn-requestid'])
    expect(callsWith(text)).toHaveLength(1)
  })

  it('Idempotency-Key from the AWS SDK: the repeat is replayed, one upstream call, billed once', async () => {
    const client = converseClient(gw.url)
    client.middlewareStack.add(
      (next) => (args) => {
        ;(args.request as { headers: Record<string, string> }).headers['idempotency-key'] = 'converse-key-1'
        return next(args)
      },
      { step: 'build' },
    )
    const usageBefore = gw.usage.length
    const input = { modelId: 'gpt', messages: [{ role: 'user' as const, content: [{ text: 'idempotent converse' }] }] }
    const first = await client.send(new ConverseCommand(input))
    const second = await client.send(new ConverseCommand(input))
    expect(second.output).toEqual(first.output)
    expect(second.$metadata.requestId).toBe(first.$metadata.requestId)
    expect(callsWith('idempotent converse')).toHaveLength(1)
    await eventually(() => gw.usage.length > usageBefore)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const charged = gw.usage.slice(usageBefore)
    expect(charged).toHaveLength(1)
    expect(charged[0]).toMatchObject({ endpoint: 'bedrock.converse', cost: expect.any(Number) })
    expect(charged[0]?.cost).toBeGreaterThan(0)
  })
})

describe('owner limits on Converse calls', () => {
  let limited: ConverseGateway
  beforeAll(async () => {
    limited = await startConverseGateway({ limits: { owners: { requestsPerMinute: 2 } } })
  })
  afterAll(() => limited.close())

  it('a call over the owner’s requests per minute: 429 ThrottlingException, the upstream not called', async () => {
    const client = converseClient(limited.url)
    const input = (text: string) => new ConverseCommand({ modelId: 'nova', messages: [{ role: 'user', content: [{ text }] }] })
    await client.send(input('limit one'))
    await client.send(input('limit two'))
    await expect(client.send(input('limit three'))).rejects.toMatchObject({
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 429 },
    })
    expect(modelCalls(limited.mock).filter((r) => r.body.includes('limit three'))).toHaveLength(0)
  })
})
