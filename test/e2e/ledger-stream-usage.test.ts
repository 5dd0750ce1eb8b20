import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually, open } from '../support/http.js'
import { freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'

// Every stream is metered: a chat stream whose client did not ask for usage has it asked for upstream, and taken
// out again, so the client's bytes are what it would have got.
const OWNER_A = ownerId({ apiKey: KEY_A })
const USAGE = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }

let chain: LedgerChain | undefined
afterEach(async () => {
  await chain?.close()
  chain = undefined
})

async function start(limits?: GatewayOptions['limits']): Promise<LedgerChain> {
  await freshMinute()
  chain = await startLedgerChain({ limits })
  return chain
}

function chatBody(extra: Record<string, unknown> = {}) {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'meter me' }], stream: true, mock: { usage: USAGE }, ...extra }
}

/** A stream's text with what differs from call to call (ids, timestamps) made alike. */
const alike = (text: string) => text.replace(/"id":"[^"]*"/g, '"id":"X"').replace(/"created":\d+/g, '"created":0')

describe('chat streams without stream_options.include_usage', () => {
  for (const [name, extra] of [
    ['no stream_options', {}],
    ['stream_options without include_usage', { stream_options: {} }],
    ['include_usage: false', { stream_options: { include_usage: false } }],
  ] as const) {
    it(`${name}: usage is asked upstream, metered and priced, and the client's bytes are the upstream's without it`, async () => {
      const c = await start({ owners: { tokensPerMinute: 1000 } })
      const res = await call(`${c.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEY_A}` }, body: chatBody(extra) })
      expect(res.status).toBe(200)
      const sent = JSON.parse(c.mock.requests[0]?.body ?? '{}')
      expect(sent.stream_options).toEqual({ include_usage: true })
      // The same request straight to the upstream: what the client would have got.
      const direct = await call(`${c.mock.url}/v1/chat/completions`, {
        headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
        body: chatBody(extra),
      })
      expect(direct.text).not.toContain('"usage"')
      expect(alike(res.text)).toBe(alike(direct.text))
      const event = await eventually(() => c.usage[0])
      // 1000 × 0.15 + 500 × 0.6 µ$
      expect(event).toMatchObject({ input_tokens: 1000, output_tokens: 500, total_tokens: 1500, cost: 450_000, complete: true })
      await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 1500)
      const refused = await call(`${c.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEY_A}` }, body: chatBody(extra) })
      expect(refused.status).toBe(429)
    })
  }

  it('a client that asked for usage gets it as before, its request untouched', async () => {
    const c = await start()
    const body = chatBody({ stream_options: { include_usage: true } })
    const res = await call(`${c.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEY_A}` }, body })
    expect(res.status).toBe(200)
    expect(res.text).toContain('"choices":[],"usage":{"prompt_tokens":1000')
    expect(res.text).toContain('"usage":null')
    expect(JSON.parse(c.mock.requests[0]?.body ?? '{}').stream_options).toEqual({ include_usage: true })
  })

  it('the OpenAI SDK streams as without the gateway: no usage chunk, no usage member; the call is metered', async () => {
    const c = await start({ owners: { tokensPerMinute: 1_000_000 } })
    const openai = new OpenAI({ baseURL: `${c.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const stream = await openai.chat.completions.create({ ...chatBody(), stream: true } as never)
    const chunks: Array<Record<string, unknown>> = []
    for await (const chunk of stream as unknown as AsyncIterable<Record<string, unknown>>) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(1)
    for (const chunk of chunks) expect('usage' in chunk).toBe(false)
    await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 1500)
  })
})

/** Reads a stream until `events` events came, then drops the connection, as a client that stops reading does. */
async function cutAfter(url: string, body: unknown, events: number): Promise<void> {
  const res = await open(url, { headers: { authorization: `Bearer ${KEY_A}` }, body })
  expect(res.statusCode).toBe(200)
  let seen = 0
  for await (const chunk of res.body) {
    seen += (String(chunk).match(/^data: /gm) ?? []).length
    if (seen >= events) break
  }
  res.body.destroy()
}

describe('a stream cut before its usage', () => {
  it('is charged its reservation (input by size, plus max_tokens), so cutting early avoids no token or cost limit', async () => {
    const c = await start({ owners: { tokensPerMinute: 1000 } })
    const body = chatBody({
      max_tokens: 2000,
      mock: { usage: { prompt_tokens: 500_000, completion_tokens: 500 }, chunks: 50, chunk_delay_ms: 20 },
    })
    await cutAfter(`${c.url}/v1/chat/completions`, body, 45)
    const event = await eventually(() => c.usage[0])
    // The usage event tells what the upstream said (nothing yet); the owner is charged what was reserved.
    expect(event).toMatchObject({ complete: false })
    const used = await eventually(async () => {
      const u = await c.gateway.usage(OWNER_A)
      return u.tokens >= 2000 ? u : undefined
    })
    expect(used.cost).toBeGreaterThanOrEqual(2000 * 600)
    const refused = await call(`${c.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEY_A}` }, body: chatBody() })
    expect(refused.status).toBe(429)
  })

  it('a call that ends is charged what it used, not its reservation', async () => {
    const c = await start({ owners: { tokensPerMinute: 1_000_000 } })
    const res = await call(`${c.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${KEY_A}` },
      body: chatBody({ max_tokens: 50_000 }),
    })
    expect(res.status).toBe(200)
    await eventually(() => c.usage[0])
    await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 1500)
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 1, tokens: 1500, cost: 450_000 })
  })

  it('a call the upstream refused gives its reservation back', async () => {
    const c = await start({ owners: { tokensPerMinute: 1_000_000 } })
    const res = await call(`${c.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${KEY_A}` },
      body: chatBody({ max_tokens: 50_000, mock: { status: 400 } }),
    })
    expect(res.status).toBe(400)
    await eventually(async () => (await c.gateway.usage(OWNER_A)).tokens === 0)
    expect(await c.gateway.usage(OWNER_A)).toEqual({ requests: 1, tokens: 0, cost: 0 })
  })
})
