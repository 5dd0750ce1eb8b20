import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { EVENTS } from '../support/anthropic-upstream.js'
import { upstreamsOnOneMock } from '../support/every-dialect.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, type MountedServer, open } from '../support/http.js'
import { type ScriptedUpstream, startScriptedUpstream } from '../support/scripted-upstream.js'
import { NODE_KINDS } from '../support/servers.js'
import { dataEvents } from '../support/sse-client.js'

const BROKEN = 'The upstream stream broke off before its end.'
const CANCELLED = 'The call was cancelled through the Recoveries API.'
const user = [{ role: 'user', content: 'hi' }]

/**
 * One streaming operation of each dialect: how it is called, the two events its upstream sends before it dies, the
 * event its client is to get for a break and for a cancel (given the call's request id), and how an event is numbered.
 */
interface StreamCase {
  name: string
  path: string
  headers: Record<string, string>
  body: unknown
  pieces: string[]
  broken(requestId: string): string
  cancelled(requestId: string): string
  numbered(event: string, id: number): string
}

const idFirst = (event: string, id: number) => `id: ${id}\n${event}`

const CASES: StreamCase[] = [
  {
    name: 'chat completions (unchanged: an unnamed event with the error body)',
    path: '/v1/chat/completions',
    headers: bearer(KEY_A),
    body: { model: 'gpt', messages: user, stream: true },
    pieces: ['a', 'b'].map(
      (text) => `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${text}"}}]}\n\n`,
    ),
    broken: () => `data: {"error":{"message":"${BROKEN}","type":"api_error","param":null,"code":"upstream_stream_broken"}}\n\n`,
    cancelled: () => `data: {"error":{"message":"${CANCELLED}","type":"invalid_request_error","param":null,"code":"call_cancelled"}}\n\n`,
    numbered: idFirst,
  },
  {
    name: 'Responses passthrough (a ResponseErrorEvent, numbered after the upstream events)',
    path: '/v1/responses',
    headers: bearer(KEY_A),
    body: { model: 'gpt', input: 'hi', stream: true },
    pieces: [
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}\n\n',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}\n\n',
    ],
    broken: () =>
      `event: error\ndata: {"type":"error","code":"upstream_stream_broken","message":"${BROKEN}","param":null,"sequence_number":2}\n\n`,
    cancelled: () =>
      `event: error\ndata: {"type":"error","code":"call_cancelled","message":"${CANCELLED}","param":null,"sequence_number":2}\n\n`,
    numbered: idFirst,
  },
  {
    name: 'generate content (an unnamed event with the Google error body, 502 named as google.rpc.Code names it: 503 UNAVAILABLE)',
    path: '/v1beta/models/gem:streamGenerateContent?alt=sse',
    headers: { 'x-goog-api-key': KEY_A },
    body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    pieces: ['a', 'b'].map((text) => `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"${text}"}]},"index":0}]}\r\n\r\n`),
    broken: () => `data: {"error":{"code":503,"message":"${BROKEN}","status":"UNAVAILABLE"}}\n\n`,
    cancelled: () => `data: {"error":{"code":499,"message":"${CANCELLED}","status":"CANCELLED"}}\n\n`,
    numbered: (event, id) => `${event}id: ${id}\n\n`,
  },
  {
    name: 'Messages (an `error` event with the Anthropic error body and the request id)',
    path: '/v1/messages',
    headers: { 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
    body: { model: 'claude', max_tokens: 16, messages: user, stream: true },
    pieces: EVENTS.slice(0, 2),
    broken: (requestId) =>
      `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"${BROKEN}"},"request_id":"${requestId}"}\n\n`,
    cancelled: (requestId) =>
      `event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"${CANCELLED}"},"request_id":"${requestId}"}\n\n`,
    numbered: idFirst,
  },
]

/** A gateway with a model of each dialect, all on one scripted upstream, hosted by a node:http server. */
async function startChain(upstream: ScriptedUpstream, overrides: Partial<GatewayOptions> = {}) {
  const gateway: Gateway = createGateway({
    upstreams: upstreamsOnOneMock(upstream.url),
    models: [
      { id: 'gpt', upstream: 'openai' },
      { id: 'gem', upstream: 'gemini' },
      { id: 'claude', upstream: 'anthropic' },
    ],
    auth: { apiKeys: [KEY_A] },
    logger: { info() {}, warn() {}, error() {} },
    ...overrides,
  })
  const server: MountedServer = await NODE_KINDS[0]!.mount(gateway)
  return { url: server.url, close: () => server.close().then(() => gateway.close()) }
}

describe('a plain stream the upstream breaks off ends with the error event of its operation', () => {
  let upstream: ScriptedUpstream
  let chain: Awaited<ReturnType<typeof startChain>>
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    chain = await startChain(upstream)
  })
  afterAll(async () => {
    await chain.close()
    await upstream.close()
  })

  for (const c of CASES) {
    it(c.name, async () => {
      upstream.script(
        c.pieces.map((piece) => Buffer.from(piece)),
        { cut: true },
      )
      const res = await call(`${chain.url}${c.path}`, { headers: c.headers, body: c.body })
      expect(res.status).toBe(200)
      expect(res.text).toBe(c.pieces.join('') + c.broken(String(res.headers['x-request-id'])))
    })
  }

  it('the Anthropic SDK raises the error event as an APIError with its type and the request id', async () => {
    upstream.script(
      EVENTS.slice(0, 2).map((piece) => Buffer.from(piece)),
      { cut: true },
    )
    const client = new Anthropic({ baseURL: chain.url, apiKey: KEY_A, maxRetries: 0 })
    const events: string[] = []
    const read = async () => {
      const stream = await client.messages.create({
        model: 'claude',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      for await (const event of stream) events.push(event.type)
    }
    const error = await read().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error')
    expect((error as InstanceType<typeof Anthropic.APIError>).apiMessage).toBe(BROKEN)
    expect((error as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^[0-9A-Z]{26}$/)
    expect(events).toEqual(['message_start', 'content_block_start'])
  })

  it('the OpenAI SDK yields the Responses error event as the last event, without throwing', async () => {
    const responses = CASES[1]!
    upstream.script(
      responses.pieces.map((piece) => Buffer.from(piece)),
      { cut: true },
    )
    const client = new OpenAI({ baseURL: `${chain.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const events: Array<{ type: string; sequence_number: number }> = []
    for await (const event of await client.responses.create({ model: 'gpt', input: 'hi', stream: true })) events.push(event)
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2])
    expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_stream_broken', message: BROKEN, param: null, sequence_number: 2 })
  })
})

describe('a resumable stream ends numbered: broken off, or cancelled through the Recoveries API', () => {
  let upstream: ScriptedUpstream
  let chain: Awaited<ReturnType<typeof startChain>>
  beforeAll(async () => {
    upstream = await startScriptedUpstream()
    chain = await startChain(upstream, { recovery: { streams: 'finish' } })
  })
  afterAll(async () => {
    await chain.close()
    await upstream.close()
  })

  /** What the client of `c` gets: each upstream event numbered, then the ending event with the next number. */
  const numberedStream = (c: StreamCase, ending: string) =>
    c.pieces.map((piece, i) => c.numbered(piece, i + 1)).join('') + c.numbered(ending, c.pieces.length + 1)

  for (const c of CASES) {
    it(`${c.name}: broken off`, async () => {
      upstream.script(
        c.pieces.map((piece) => Buffer.from(piece)),
        { cut: true },
      )
      const res = await call(`${chain.url}${c.path}`, { headers: c.headers, body: c.body })
      expect(res.text).toBe(numberedStream(c, c.broken(String(res.headers['x-request-id']))))
    })

    it(`${c.name}: cancelled`, async () => {
      // A third event is never released: the call is still running when it is cancelled.
      upstream.script(
        [...c.pieces, c.pieces[0]!].map((piece) => Buffer.from(piece)),
        { gated: true },
      )
      upstream.release()
      upstream.release()
      const res = await open(`${chain.url}${c.path}`, { headers: c.headers, body: c.body })
      const requestId = String(res.headers['x-request-id'])
      let text = ''
      let cancelled = false
      for await (const chunk of res.body) {
        text += String(chunk)
        if (!cancelled && dataEvents(text) >= c.pieces.length) {
          cancelled = true
          const answer = await call(`${chain.url}/v1/recoveries/${requestId}/cancel`, { method: 'POST', headers: bearer(KEY_A) })
          expect(answer.json).toMatchObject({ cancelled: true })
        }
      }
      expect(text).toBe(numberedStream(c, c.cancelled(requestId)))
    })
  }
})
