import diagnosticsChannel from 'node:diagnostics_channel'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHandler } from '../../adapters/node.js'
import { assembledAnswer } from '../../src/dialects/index.js'
import { eventData } from '../../src/sse/parse.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import type { CallPlan } from '../../src/translate/index.js'
import type { Operation, RecoveryRecord } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { collectingGateway } from '../support/collecting-gateway.js'
import { upstreamsOnOneMock } from '../support/every-dialect.js'
import { bearer, KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call } from '../support/http.js'
import { rawClient } from '../support/raw-client.js'
import { serve } from '../support/servers.js'

const MB = 1000 * 1000
const MiB = 1024 * 1024
const CONTENT_BYTES = 30 * MB
const MOCK = { content_bytes: CONTENT_BYTES, chunks: 400 }

/** One stream format, as a client asks for it. */
interface Format {
  operation: Operation
  path: string
  body: Record<string, unknown>
  headers?: Record<string, string>
}

const FORMATS: Record<string, Format> = {
  chat: { operation: 'chat.completions', path: '/v1/chat/completions', body: chatBody('kept chat', { stream: true, mock: MOCK }) },
  responses: {
    operation: 'responses',
    path: '/v1/responses',
    body: { model: 'gpt-4o-mini', input: 'kept responses', stream: true, mock: MOCK },
  },
  gemini: {
    operation: 'generateContent',
    path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    body: geminiBody('kept gemini', { mock: MOCK }),
  },
  anthropic: {
    operation: 'messages',
    path: '/v1/messages',
    body: {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'kept anthropic' }],
      stream: true,
      mock: MOCK,
    },
    headers: { 'anthropic-version': '2023-06-01' },
  },
}

let mock: MockUpstream
let url: string
let close: () => Promise<void>

beforeAll(async () => {
  // Records nothing itself: it would hold every stream it sent.
  mock = await startMockUpstream({ apiKey: UPSTREAM_KEY, record: false })
  const { gateway } = collectingGateway({
    upstreams: upstreamsOnOneMock(mock.url, UPSTREAM_KEY),
    models: [
      { id: 'gpt-4o-mini', upstream: 'openai' },
      { id: 'gemini-2.5-flash', upstream: 'gemini' },
      { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
    ],
    // Room for one record of a 30 MB stream: its answer and its events, each counted twice (UTF-16).
    recovery: { streams: 'finish', maxMemoryBytes: 1024 * MiB, maxBytesPerOwner: 512 * MiB },
  })
  const server = await serve(nodeHandler(gateway))
  url = server.url
  close = async () => {
    await server.close()
    await gateway.close()
    await mock.close()
  }
})
afterAll(() => close())

/**
 * Abandons a stream once its head arrived and counts the turns of the event loop from the moment the upstream sent
 * its last byte until the record is stored: the time the gateway spends building the record.
 */
async function keepAbandoned(format: Format): Promise<{ requestId: string; turns: number }> {
  const completedBefore = mock.completedCalls
  let turns = 0
  let stored: string | undefined
  const onStored = (message: unknown) => {
    stored = (message as { requestId: string }).requestId
  }
  diagnosticsChannel.subscribe('model-gateway:record:stored', onStored)
  try {
    const client = rawClient(url, format.path, format.body, KEY_A, format.headers)
    const requestId = await client.requestId()
    client.socket.resetAndDestroy()
    await new Promise<void>((resolve) => {
      const tick = () => {
        if (mock.completedCalls > completedBefore) turns++
        if (stored === requestId) resolve()
        else setImmediate(tick)
      }
      setImmediate(tick)
    })
    return { requestId, turns }
  } finally {
    diagnosticsChannel.unsubscribe('model-gateway:record:stored', onStored)
  }
}

/** What the record's answer was before it was built in slices: the answer assembled at once, then `JSON.stringify`. */
function straightforwardBody(format: Format, record: RecoveryRecord): string {
  const plan: CallPlan = {
    model: String(format.body.model ?? 'gemini-2.5-flash'),
    upstreamModel: String(format.body.model ?? 'gemini-2.5-flash'),
    stream: true,
    includeUsage: true,
    requestId: record.request_id,
    created: record.created_at,
    request: {},
  }
  const answer = assembledAnswer(format.operation, eventData(record.response.stream_raw as string), plan)
  return JSON.stringify(answer)
}

describe('a kept 30 MB stream is built into its record a slice at a time', () => {
  it.each(Object.keys(FORMATS))(
    '%s: with many turns of the event loop while it is built, the same record as at once',
    async (name) => {
      const format = FORMATS[name] as Format
      const { requestId, turns } = await keepAbandoned(format)
      const res = await call(`${url}/v1/recoveries/${requestId}`, { headers: bearer(KEY_A) })
      expect(res.status).toBe(200)
      const record = JSON.parse(res.text) as RecoveryRecord
      const streamRaw = record.response.stream_raw as string
      const streamMiB = Buffer.byteLength(streamRaw) / MiB
      console.log(`kept-record-slices: ${name} stream ${streamMiB.toFixed(1)} MiB, ${turns} turns while its record was built`)
      expect(record.response.content_type).toBe('application/json')
      const expected = straightforwardBody(format, record)
      expect(record.response.body_raw === expected).toBe(true)
      expect(record.response.response_body_size).toBe(Buffer.byteLength(expected))
      // Four passes, each with a turn of the event loop after each MiB it goes through: the events decoded and read
      // (the stream twice), the answer assembled and written (about the answer twice). A pass done at once (the
      // answer's JSON, a Messages stream assembled in one go, a Responses stream's final event parsed whole) leaves a
      // turn out per MiB; a fifth is left for turns the count misses before it sees the upstream's end.
      const answerMiB = Number(record.response.response_body_size) / MiB
      expect(turns).toBeGreaterThanOrEqual(Math.floor(0.8 * (2 * streamMiB + 2 * answerMiB)))
    },
    120_000,
  )
})
