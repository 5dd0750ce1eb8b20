import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ownerOfKey } from '../../src/http/auth.js'
import type { GatewayOptions } from '../../src/types.js'
import { KEY_A, KEY_B } from '../support/fixture.js'
import { freshMinute, type LedgerChain, startLedgerChain } from '../support/ledger.js'

interface Answer {
  status: number
  cache: string | null
  age: string | null
  text: string
}

/** One chat call with fetch: its status, cache headers and body text. */
async function chat(url: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', ...body }),
  })
  return { status: res.status, cache: res.headers.get('x-model-gateway-cache'), age: res.headers.get('age'), text: await res.text() }
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content }], ...extra })

/** A chain with the cache on, and a count of the upstream calls `run` made. */
function useCacheChain(options: Partial<GatewayOptions>): { chain: LedgerChain; calls: (run: () => Promise<void>) => Promise<number> } {
  const chained = {} as { chain: LedgerChain; calls: (run: () => Promise<void>) => Promise<number> }
  chained.calls = async (run) => {
    const before = chained.chain.mock.requests.length
    await run()
    return chained.chain.mock.requests.length - before
  }
  beforeAll(async () => {
    chained.chain = await startLedgerChain({ auth: { apiKeys: [KEY_A, KEY_B] }, ...options })
  })
  afterAll(() => chained.chain.close())
  return chained
}

describe('the response cache: who shares, what a request asks, what is never kept', () => {
  const t = useCacheChain({ cache: {} })

  it("scope 'owner' (the default): two owners never share an answer", async () => {
    const calls = await t.calls(async () => {
      expect((await chat(t.chain.url, KEY_A, ask('owned'))).cache).toBe('miss')
      expect((await chat(t.chain.url, KEY_B, ask('owned'))).cache).toBe('miss')
      expect((await chat(t.chain.url, KEY_B, ask('owned'))).cache).toBe('hit')
    })
    expect(calls).toBe(2)
  })

  it('Cache-Control: no-cache skips the lookup and keeps the fresh answer; no-store neither reads nor keeps', async () => {
    const calls = await t.calls(async () => {
      const first = await chat(t.chain.url, KEY_A, ask('directives', { mock: { content: 'old' } }))
      expect(first.cache).toBe('miss')
      const fresh = await chat(t.chain.url, KEY_A, ask('directives', { mock: { content: 'old' } }), { 'cache-control': 'no-cache' })
      expect(fresh.cache).toBe('bypass')
      const skipped = await chat(t.chain.url, KEY_A, ask('directives', { mock: { content: 'old' } }), { 'cache-control': 'no-store' })
      expect(skipped.cache).toBe('bypass')
      const hit = await chat(t.chain.url, KEY_A, ask('directives', { mock: { content: 'old' } }))
      expect(hit.cache).toBe('hit')
      // The answer kept is the one no-cache fetched (its id differs from the first's).
      expect(JSON.parse(hit.text).id).toBe(JSON.parse(fresh.text).id)
      expect(JSON.parse(hit.text).id).not.toBe(JSON.parse(first.text).id)

      const unkept = await chat(t.chain.url, KEY_A, ask('never kept'), { 'cache-control': 'no-store' })
      expect(unkept.cache).toBe('bypass')
      expect((await chat(t.chain.url, KEY_A, ask('never kept'))).cache).toBe('miss')
    })
    expect(calls).toBe(5)
  })

  it('an upstream error, and a stream the upstream cut, are never kept', async () => {
    const calls = await t.calls(async () => {
      for (let i = 0; i < 2; i++) {
        const failed = await chat(t.chain.url, KEY_A, ask('fail me', { mock: { status: 500 } }))
        expect(failed.status).toBe(500)
        expect(failed.cache).toBe('miss')
      }
      for (let i = 0; i < 2; i++) {
        const cut = await chat(t.chain.url, KEY_A, ask('cut me', { stream: true, mock: { chunks: 6, destroy_after_frames: 3 } }))
        expect(cut.cache).toBe('miss')
        expect(cut.text).not.toContain('[DONE]')
      }
    })
    expect(calls).toBe(4)
  })

  it('identical calls at once make one upstream call; the others are served its answer, in their own framing', async () => {
    const body = ask('at once', { mock: { delay_ms: 300 } })
    const calls = await t.calls(async () => {
      const answers = await Promise.all([
        chat(t.chain.url, KEY_A, body),
        chat(t.chain.url, KEY_A, body),
        chat(t.chain.url, KEY_A, { ...body, stream: true }),
      ])
      expect(answers.map((a) => a.cache).sort()).toEqual(['hit', 'hit', 'miss'])
      expect(answers[1]?.text).toBe(answers[0]?.text)
      expect(answers[2]?.text).toContain('data: [DONE]')
    })
    expect(calls).toBe(1)
  })

  it('a translated hit names the hint fields its translation dropped, as the miss did', async () => {
    const send = () =>
      fetch(`${t.chain.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          max_tokens: 32,
          metadata: { user_id: 'u-1' },
          messages: [{ role: 'user', content: 'dropped hints' }],
        }),
      })
    const miss = await send()
    const hit = await send()
    expect([miss.headers.get('x-model-gateway-cache'), hit.headers.get('x-model-gateway-cache')]).toEqual(['miss', 'hit'])
    expect(miss.headers.get('x-model-gateway-dropped')).toContain('metadata')
    expect(hit.headers.get('x-model-gateway-dropped')).toBe(miss.headers.get('x-model-gateway-dropped'))
    expect(await hit.json()).toEqual(await miss.json())
  })

  it('cache.delete removes an owner’s answers, a model’s, or all', async () => {
    await chat(t.chain.url, KEY_A, ask('delete me'))
    await chat(t.chain.url, KEY_B, ask('delete me'))
    expect((await chat(t.chain.url, KEY_A, ask('delete me'))).cache).toBe('hit')
    expect(await t.chain.gateway.cache.delete({ owner: ownerOfKey(KEY_A), model: 'gpt-4o-mini' })).toBeGreaterThanOrEqual(1)
    expect((await chat(t.chain.url, KEY_B, ask('delete me'))).cache).toBe('hit')
    expect((await chat(t.chain.url, KEY_A, ask('delete me'))).cache).toBe('miss')
    expect(await t.chain.gateway.cache.delete({ model: 'gemini-2.5-flash' })).toBe(0)
    expect(await t.chain.gateway.cache.delete()).toBeGreaterThanOrEqual(2)
    expect((await chat(t.chain.url, KEY_B, ask('delete me'))).cache).toBe('miss')
  })
})

describe("the response cache: scope 'shared', models, TTL and the byte bound", () => {
  const shared = useCacheChain({ cache: { scope: 'shared', models: ['gpt-4o-mini'], ttlMs: 400, maxBytes: 16 * 1024 } })

  it("scope 'shared': another owner is served the same answer", async () => {
    const calls = await shared.calls(async () => {
      await chat(shared.chain.url, KEY_A, ask('shared'))
      expect((await chat(shared.chain.url, KEY_B, ask('shared'))).cache).toBe('hit')
    })
    expect(calls).toBe(1)
  })

  it('a model the cache leaves out is never looked up', async () => {
    const call = () =>
      fetch(`${shared.chain.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_A}` },
        body: JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'left out' }] }),
      })
    expect((await call()).headers.get('x-model-gateway-cache')).toBe('bypass')
    expect((await call()).headers.get('x-model-gateway-cache')).toBe('bypass')
  })

  it('an answer older than ttlMs is not served', async () => {
    await chat(shared.chain.url, KEY_A, ask('ttl'))
    expect((await chat(shared.chain.url, KEY_A, ask('ttl'))).cache).toBe('hit')
    await sleep(600)
    expect((await chat(shared.chain.url, KEY_A, ask('ttl'))).cache).toBe('miss')
  })

  it('past maxBytes the least recently used answers go first; one above a quarter of it is never kept', async () => {
    const filler = (i: number) => ask(`bound ${i}`, { mock: { content_bytes: 1500 } })
    for (let i = 0; i < 12; i++) await chat(shared.chain.url, KEY_A, filler(i))
    expect((await chat(shared.chain.url, KEY_A, filler(11))).cache).toBe('hit')
    expect((await chat(shared.chain.url, KEY_A, filler(0))).cache).toBe('miss')
    const large = ask('too large', { mock: { content_bytes: 5000 } })
    await chat(shared.chain.url, KEY_A, large)
    expect((await chat(shared.chain.url, KEY_A, large)).cache).toBe('miss')
  })
})

describe('the response cache and the ledger', () => {
  const t = useCacheChain({ cache: {}, limits: { owners: { requestsPerMinute: 3 } } })

  it('a hit reports cached: true at no cost, counts as a request, and charges no tokens', async () => {
    await freshMinute()
    const before = await t.chain.gateway.usage(ownerOfKey(KEY_A))
    const calls = await t.calls(async () => {
      expect((await chat(t.chain.url, KEY_A, ask('metered'))).cache).toBe('miss')
      expect((await chat(t.chain.url, KEY_A, ask('metered'))).cache).toBe('hit')
    })
    expect(calls).toBe(1)
    const events = t.chain.usage.slice(-2)
    expect(events[0]?.cached).toBeUndefined()
    expect(events[0]?.cost).toBeGreaterThan(0)
    expect(events[1]).toMatchObject({ cached: true, cost: 0, total_tokens: events[0]?.total_tokens, model: 'gpt-4o-mini' })
    const after = await t.chain.gateway.usage(ownerOfKey(KEY_A))
    expect(after.requests - before.requests).toBe(2)
    expect(after.tokens - before.tokens).toBe(events[0]?.total_tokens)
    expect((await chat(t.chain.url, KEY_A, ask('metered'))).cache).toBe('hit')
    // The fourth call of the minute is over requestsPerMinute: hits count.
    expect((await chat(t.chain.url, KEY_A, ask('metered'))).status).toBe(429)
  })
})

describe('the response cache and answers cut by their token limit', () => {
  let upstream: http.Server
  let url = ''
  let calls = 0
  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      calls++
      req.resume()
      req.on('end', () => {
        res.setHeader('content-type', 'application/json')
        res.end(
          JSON.stringify({
            id: `chatcmpl-${calls}`,
            object: 'chat.completion',
            created: 1,
            model: 'gpt-4o-mini',
            choices: [{ index: 0, message: { role: 'assistant', content: 'cut' }, finish_reason: 'length' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        )
      })
    })
    upstream.listen(0, '127.0.0.1')
    await once(upstream, 'listening')
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`
  })
  afterAll(() => new Promise((resolve) => upstream.close(resolve)))

  for (const storeLengthStops of [false, true]) {
    it(`finish_reason: length is ${storeLengthStops ? 'kept with storeLengthStops' : 'never kept by default'}`, async () => {
      const chain = await startLedgerChain({
        upstreams: { openai: { type: 'openai', baseUrl: url, apiKey: 'sk-up' } },
        models: [{ id: 'gpt-4o-mini', upstream: 'openai' }],
        cache: { storeLengthStops },
      })
      try {
        const before = calls
        await chat(chain.url, KEY_A, ask('cut short'))
        const second = await chat(chain.url, KEY_A, ask('cut short'))
        expect(second.cache).toBe(storeLengthStops ? 'hit' : 'miss')
        expect(calls - before).toBe(storeLengthStops ? 1 : 2)
      } finally {
        await chain.close()
      }
    })
  }
})
