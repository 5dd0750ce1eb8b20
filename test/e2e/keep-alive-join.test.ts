// Keep-alive for the streams a client waits on behind another call: a retry or a repeated key that joins a running
// call, and the events of a background response.

import OpenAI from 'openai'
import { Pool } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CuttingProxy, scheduled, startCuttingProxy } from '../support/cutting-proxy.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { type Chain, chatBody, KEEP_ALIVE, SLOW, spyingFetch, startChain, useChain } from '../support/keep-alive-chain.js'
import { type AdminClient, connectAdmin, describeWithRedis, dropKeys, REDIS_URL, recommendedKeyv } from '../support/redis.js'
import { cutAfterEvents } from '../support/sse-client.js'

const CHAT = '/v1/chat/completions'
/** The text of an SSE stream of chat chunks, comments aside. */
const chatText = (raw: string) => [...raw.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')
const withoutComments = (raw: string) => raw.split(KEEP_ALIVE).join('')

const upstreamCalls = (chain: Chain, marker: string) => chain.mock.requests.filter((r) => r.body.includes(`"${marker}"`)).length

/** A streamed chat call of `body` with extra headers, read whole. */
const post = (chain: Chain, body: unknown, headers: Record<string, string>) =>
  call(`${chain.url}${CHAT}`, { headers: { ...bearer(KEY_A), ...headers }, body })

/** A first attempt, held by its client, and a repeat sent once the upstream has the call and has not answered yet. */
async function joined(chain: Chain, marker: string, mock: unknown, first: Record<string, string>, repeat: Record<string, string>) {
  const body = chatBody(marker, { mock })
  const a = post(chain, body, first)
  await eventually(() => upstreamCalls(chain, marker) === 1)
  const b = await post(chain, body, repeat)
  return { a: await a, b }
}

describe('keep-alive for a stream that joins a running call (keepAlive.streamMs: 50)', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })

  it('an SDK retry joined before the upstream answered: keep-alives under the first call’s head, then the whole stream', async () => {
    const { a, b } = await joined(chain, 'join retry', SLOW, { 'x-stainless-retry-count': '0' }, { 'x-stainless-retry-count': '1' })
    expect(b.status).toBe(200)
    expect(b.headers['content-type']).toBe('text/event-stream')
    expect(b.headers['x-request-id']).toBe(a.headers['x-request-id'])
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(a.headers['idempotent-replayed']).toBeUndefined()
    // Before the upstream's first byte, and in the quiet spells between its events.
    expect(b.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    const firstData = b.text.indexOf('data:')
    expect(b.text.indexOf(KEEP_ALIVE, firstData)).toBeGreaterThan(firstData)
    expect(withoutComments(b.text)).toBe(withoutComments(a.text))
    expect(chatText(b.text)).toBe('Echo: join retry')
    expect(upstreamCalls(chain, 'join retry')).toBe(1)
  })

  it('a repeated Idempotency-Key joined before the upstream answered: the same', async () => {
    const key = { 'idempotency-key': 'ka-join-key' }
    const { a, b } = await joined(chain, 'join key', SLOW, key, key)
    expect(b.status).toBe(200)
    expect(b.headers['x-request-id']).toBe(a.headers['x-request-id'])
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(b.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    expect(withoutComments(b.text)).toBe(withoutComments(a.text))
    expect(withoutComments(b.text)).toContain('data: [DONE]\n\n')
    expect(upstreamCalls(chain, 'join key')).toBe(1)
  })

  it('an upstream error after a joiner’s keep-alive commit: both streams end with the error event, no status change', async () => {
    const retry = (n: string) => ({ 'x-stainless-retry-count': n })
    const { a, b } = await joined(chain, 'join error', { delay_ms: 300, status: 429 }, retry('0'), retry('1'))
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.text.startsWith(KEEP_ALIVE)).toBe(true)
    const event = withoutComments(b.text)
    expect(event).toMatch(/^data: \{"error":\{"message":"Mock upstream error \(status 429\)\."[^\n]*"code":"upstream_error"\}\}\n\n$/)
    expect(withoutComments(a.text)).toBe(event)
  })

  it('a retry that joins once the stream flows gets the events so far, with no comment replayed into them', async () => {
    const body = chatBody('join late', { mock: { chunks: 4, chunk_delay_ms: 150 } })
    const a = post(chain, body, { 'x-stainless-retry-count': '0' })
    await eventually(() => upstreamCalls(chain, 'join late') === 1)
    const [first, b] = await Promise.all([a, post(chain, body, { 'x-stainless-retry-count': '1' })])
    expect(withoutComments(b.text)).toBe(withoutComments(first.text))
    expect(chatText(b.text)).toBe('Echo: join late')
  })
})

describe('an openai SDK retry after a CDN cut the first attempt (recovery.streams: finish)', () => {
  let chain: Chain
  let proxy: CuttingProxy
  beforeAll(async () => {
    chain = await startChain({ keepAlive: { streamMs: 50 }, recovery: { streams: 'finish' } })
    // The first attempt: the CDN gives up on it with a 524 before any byte came; the SDK retries through it.
    proxy = await startCuttingProxy(chain.url, scheduled([{ kind: 'timeout', status: 524, ms: 20 }]))
  })
  afterAll(async () => {
    await proxy.close()
    await chain.close()
  })

  it('the retry joins the running call and, with a timeout shorter than the model, is kept alive to the whole text', async () => {
    // The upstream's first byte comes long after the SDK's timeout: only a keep-alive head keeps the retry waiting.
    chain.mock.steer('sdk join', { delay_ms: 1500, chunks: 3, chunk_delay_ms: 200 })
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${proxy.url}/v1`, maxRetries: 1, timeout: 400, fetch: spy.fetch })
    const stream = await client.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'sdk join' }], stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('Echo: sdk join')
    expect(proxy.log.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1'])
    expect(proxy.log[0]?.fate.kind).toBe('timeout')
    expect(spy.seen()).toContain(KEEP_ALIVE)
    expect(upstreamCalls(chain, 'sdk join')).toBe(1)
  })
})

describe('keep-alive for background response streams (keepAlive.streamMs: 50)', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })

  it('GET /v1/responses/{id}?stream=true during a quiet upstream: keep-alives, then every event to the end', async () => {
    chain.mock.steer('bg quiet', SLOW)
    const created = await call(`${chain.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: 'gpt', input: 'bg quiet', background: true },
    })
    expect(created.status).toBe(200)
    const res = await call(`${chain.url}/v1/responses/${created.json.id}?stream=true`, { headers: bearer(KEY_A) })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    // The events of the call's start come at once; the model's quiet before its first delta gets comments.
    const firstDelta = res.text.indexOf('response.output_text.delta')
    expect(res.text.indexOf(KEEP_ALIVE)).toBeGreaterThan(0)
    expect(res.text.indexOf(KEEP_ALIVE)).toBeLessThan(firstDelta)
    const events = withoutComments(res.text)
    expect(events).toContain('"type":"response.completed"')
    const numbers = [...events.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]))
    expect(numbers).toEqual(numbers.map((_, i) => i))
  })

  it('a create with stream: true and background: true: keep-alives around the events, the request id on the head', async () => {
    chain.mock.steer('bg create stream', SLOW)
    const res = await call(`${chain.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: 'gpt', input: 'bg create stream', background: true, stream: true },
    })
    expect(res.status).toBe(200)
    expect(res.headers['x-request-id']).toMatch(/^\w+$/)
    expect(res.text).toContain(KEEP_ALIVE)
    expect(withoutComments(res.text)).toContain('"type":"response.completed"')
  })

  it('the openai SDK streams a background response by id through the comments', async () => {
    chain.mock.steer('bg sdk', SLOW)
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0, fetch: spy.fetch })
    const created = await client.responses.create({ model: 'gpt', input: 'bg sdk', background: true })
    let text = ''
    for await (const event of await client.responses.retrieve(created.id, { stream: true })) {
      if (event.type === 'response.output_text.delta') text += event.delta
    }
    expect(text).toBe('Echo: bg sdk')
    expect(spy.seen()).toContain(KEEP_ALIVE)
  })
})

describe('keepAlive.streamMs: 0 for joined and background streams', () => {
  const chain = useChain({ keepAlive: { streamMs: 0 } })

  it('a joined retry and a background stream get no comment, however quiet', async () => {
    const { a, b } = await joined(chain, 'off join', SLOW, { 'x-stainless-retry-count': '0' }, { 'x-stainless-retry-count': '1' })
    expect(b.text).toBe(a.text)
    expect(b.text).not.toContain(': keep-alive')
    chain.mock.steer('off bg', SLOW)
    const created = await call(`${chain.url}/v1/responses`, {
      headers: bearer(KEY_A),
      body: { model: 'gpt', input: 'off bg', background: true },
    })
    const res = await call(`${chain.url}/v1/responses/${created.json.id}?stream=true`, { headers: bearer(KEY_A) })
    expect(withoutComments(res.text)).toContain('"type":"response.completed"')
    expect(res.text).not.toContain(': keep-alive')
  })
})

describe('one sweeper for joined streams too', () => {
  const chain = useChain({ keepAlive: { streamMs: 100 } })
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

  it('200 retries joined to a call whose upstream never answers: each gets its head and comments, no timer more', async () => {
    chain.mock.steer('joined forever', { hang: true })
    const pool = new Pool(chain.url, { connections: 201, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
    const hold = (retry: number) =>
      pool.request({
        method: 'POST',
        path: CHAT,
        headers: { ...bearer(KEY_A), 'content-type': 'application/json', 'x-stainless-retry-count': String(retry) },
        body: JSON.stringify(chatBody('joined forever')),
      })
    try {
      // Each request resolves on its head, which only a keep-alive sends: the upstream never answers.
      const first = await hold(0)
      const withOne = timers()
      const joiners = await Promise.all(Array.from({ length: 200 }, () => hold(1)))
      expect(joiners.every((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === 'true')).toBe(true)
      expect(timers()).toBeLessThanOrEqual(withOne)
      expect(upstreamCalls(chain, 'joined forever')).toBe(1)
      const comments = await Promise.all(
        joiners.map(
          (r) =>
            new Promise<string>((resolve) => {
              let text = ''
              r.body.on('data', (chunk: Buffer) => {
                text += chunk.toString()
                if (text.includes(`${KEEP_ALIVE}${KEEP_ALIVE}`)) resolve(text)
              })
            }),
        ),
      )
      expect(comments).toHaveLength(200)
      first.body.resume()
    } finally {
      await pool.destroy()
      chain.mock.steer('joined forever', undefined)
    }
  })
})

/** Every key this file writes to Redis starts with this; removed after. */
const RUN = `mg-kajoin-${process.pid}-${Date.now().toString(36)}`

await describeWithRedis('keep-alive for a keyed stream followed from another process (Redis)', () => {
  let a: Chain
  let b: Chain
  let admin: AdminClient
  beforeAll(async () => {
    const options = { keepAlive: { streamMs: 50 } }
    ;[a, b] = await Promise.all([
      startChain({ ...options, store: recommendedKeyv(RUN, REDIS_URL) }),
      startChain({ ...options, store: recommendedKeyv(RUN, REDIS_URL) }),
    ])
    admin = await connectAdmin()
  })
  afterAll(async () => {
    await dropKeys(admin, `${RUN}*`)
    await admin.quit()
    await Promise.all([a.close(), b.close()])
  })

  it('the repeat on process B follows the journal of process A with keep-alives through its quiet spells', async () => {
    const body = chatBody('follow quiet', { mock: { chunks: 4, chunk_delay_ms: 300 } })
    const keyed = { ...bearer(KEY_A), 'idempotency-key': 'ka-follow-quiet' }
    const cutOff = await cutAfterEvents(`${a.url}${CHAT}`, keyed, body, 1)
    const again = await call(`${b.url}${CHAT}`, { headers: keyed, body })
    expect(again.status).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['x-request-id']).toBe(cutOff.requestId)
    expect(again.text).toContain(KEEP_ALIVE)
    expect(withoutComments(again.text).startsWith(cutOff.received)).toBe(true)
    expect(chatText(again.text)).toBe('Echo: follow quiet')
    expect(upstreamCalls(a, 'follow quiet') + upstreamCalls(b, 'follow quiet')).toBe(1)
  })
})
