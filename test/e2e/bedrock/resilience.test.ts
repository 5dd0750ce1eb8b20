import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BedrockFixture, CLAUDE_ON_BEDROCK, startBedrockFixture } from '../../support/bedrock.js'
import { bearer, KEY_A } from '../../support/fixture.js'
import { call, eventually } from '../../support/http.js'
import { cutAfterEvents, sseEvents } from '../../support/sse-client.js'

// The gateway's promises hold on a Bedrock upstream: a cut stream (read from an event stream) runs on and is resumed,
// an SDK retry joins the running call, and a background response is run and served by id.

let fx: BedrockFixture
beforeAll(async () => {
  fx = await startBedrockFixture({ gateway: { recovery: { streams: 'finish' } } })
})
afterAll(() => fx.close())

const CLAUDE_HEADERS = { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' }
const upstreamCalls = (marker: string) => fx.mock.requests.filter((r) => r.path.startsWith('/model/') && r.body.includes(marker))
const body = (text: string, extra: Record<string, unknown> = {}) => ({
  model: CLAUDE_ON_BEDROCK,
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
  ...extra,
})

describe('Claude on Bedrock keeps the gateway’s promises', () => {
  it('a cut stream runs to its end upstream; resumed after event 3, the parts make the whole stream', async () => {
    const cut = await cutAfterEvents(
      `${fx.url}/v1/messages`,
      CLAUDE_HEADERS,
      body('resume bedrock', { stream: true, mock: { chunks: 8, chunk_delay_ms: 30 } }),
      3,
    )
    expect(cut.status).toBe(200)
    expect(sseEvents(cut.received)).toHaveLength(3)
    const record = await eventually(async () => {
      const res = await call(`${fx.url}/v1/recoveries/${cut.requestId}`, { headers: bearer(KEY_A) })
      return res.status === 200 ? (res.json as { response: { stream_raw: string } }) : undefined
    })
    const rest = await call(`${fx.url}/v1/recoveries/${cut.requestId}/stream`, { headers: { ...bearer(KEY_A), 'last-event-id': '3' } })
    expect(rest.status).toBe(200)
    expect(cut.received + rest.text).toBe(record.response.stream_raw)
    expect(rest.text).toMatch(/\nevent: message_stop\ndata: /)
    expect(upstreamCalls('resume bedrock')).toHaveLength(1)
  })

  it('an SDK retry joins the call still running: one Bedrock call, one answer', async () => {
    const message = await new Anthropic({ baseURL: fx.url, apiKey: KEY_A, timeout: 1000, maxRetries: 2 }).messages.create(
      body('retry on bedrock', { mock: { delay_ms: 2500 } }) as Anthropic.MessageCreateParamsNonStreaming,
    )
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: retry on bedrock' }])
    expect(upstreamCalls('retry on bedrock')).toHaveLength(1)
  })

  it('a background response (Responses, translated): created at once, run by the gateway, completed by id', async () => {
    const openai = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    fx.mock.steer('background on bedrock', { delay_ms: 300 })
    const created = await openai.responses.create({ model: CLAUDE_ON_BEDROCK, input: 'background on bedrock', background: true })
    expect(['queued', 'in_progress']).toContain(created.status)
    const done = await eventually(async () => {
      const now = await openai.responses.retrieve(created.id)
      return now.status === 'completed' ? now : undefined
    })
    expect(done.output_text).toBe('Echo: background on bedrock')
    const [sent] = upstreamCalls('background on bedrock')
    expect(sent?.path).toContain('/invoke-with-response-stream')
    expect(sent?.body).not.toContain('"background"')
  })
})
