import { InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awsClient, type BedrockClientFixture, MODELS, startBedrockClientFixture } from '../../support/bedrock-clients.js'
import { KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { rawClient } from '../../support/raw-client.js'

// Bounds of InvokeModel streams: a 30 MB answer is framed whole (each event its own frame, within the codec's frame
// limit), and a client that stops reading an event stream is cut by the write deadline, its stream kept.

let fx: BedrockClientFixture
let stalled: BedrockClientFixture
beforeAll(async () => {
  fx = await startBedrockClientFixture()
  stalled = await startBedrockClientFixture({ recovery: { streams: 'finish' }, timeouts: { clientWriteMs: 300 } })
})
afterAll(async () => {
  await fx.close()
  await stalled.close()
})

const MB = 1000 * 1000
const bearer = { authorization: `Bearer ${KEY_A}` }
const STREAM = (model: string) => `/model/${model}/invoke-with-response-stream`
const body = (text: string) => ({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 32, messages: [{ role: 'user', content: text }] })

describe('large and stalled streams', () => {
  it('a 3 MB request body (scanned, not parsed on the way in) reaches the upstream as Messages', async () => {
    const marker = 'large body'
    const big = { ...body(marker), system: 'x'.repeat(3 * MB), anthropic_beta: ['context-1m-2025-08-07'] }
    const res = await call(`${fx.url}/model/${MODELS.anthropic.id}/invoke`, { headers: bearer, body: big })
    expect(res.status).toBe(200)
    expect(res.json.content[0].text).toBe(`Echo: ${marker}`)
    const sent = fx.mock.requests.filter((r) => r.body.includes(marker)).at(-1)
    const upstream = JSON.parse(sent?.body ?? '{}')
    expect(upstream).toMatchObject({ model: 'claude-sonnet-4-5', stream: false, max_tokens: 32 })
    expect(upstream.system).toHaveLength(3 * MB)
    expect(upstream).not.toHaveProperty('anthropic_beta')
    expect(sent?.headers['anthropic-beta']).toBe('context-1m-2025-08-07')
  })

  it('a 30 MB answer reaches the AWS SDK whole, one frame per event', async () => {
    const marker = 'thirty megabytes'
    fx.mock.steer(marker, { content_bytes: 30 * MB, chunks: 60 })
    const out = await awsClient(fx.url).send(
      new InvokeModelWithResponseStreamCommand({
        modelId: MODELS.anthropic.id,
        contentType: 'application/json',
        body: JSON.stringify(body(marker)),
      }),
    )
    let text = 0
    let frames = 0
    for await (const part of out.body ?? []) {
      frames++
      const event = JSON.parse(Buffer.from(part.chunk?.bytes ?? []).toString('utf8')) as { delta?: { text?: string } }
      text += event.delta?.text?.length ?? 0
    }
    expect(text).toBe(30 * MB)
    expect(frames).toBeGreaterThan(60)
    fx.mock.steer(marker, undefined)
  })

  it('a client that stops reading an event stream is cut, and its stream kept', async () => {
    const marker = 'stops reading'
    stalled.mock.steer(marker, { content_bytes: 8 * MB, chunks: 80 })
    const client = rawClient(stalled.url, STREAM(MODELS.anthropic.id), body(marker), KEY_A)
    const requestId = await client.requestId()
    client.socket.pause()
    const record = await eventually(async () => {
      const res = await call(`${stalled.url}/v1/recoveries/${requestId}`, { headers: bearer })
      return res.status === 200 ? res.json : undefined
    }, 20_000)
    expect(record.interrupted_reason).toBe('write failed: ETIMEDOUT')
    client.socket.resume()
    await client.closed
    // The gateway still answers.
    expect((await call(`${stalled.url}/inference-profiles`)).status).toBe(200)
    stalled.mock.steer(marker, undefined)
  })
})
