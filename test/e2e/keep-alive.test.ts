import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { streamText } from 'ai'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { createRecoveringFetch } from '../../src/client/index.js'
import { isGatewayError } from '../../src/errors.js'
import { createGateway } from '../../src/gateway.js'
import type { GatewayOptions } from '../../src/types.js'
import { startCuttingProxy } from '../support/cutting-proxy.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { call } from '../support/http.js'
import { CLAUDE, chatBody, GEMINI, KEEP_ALIVE, SLOW, spyingFetch, useChain } from '../support/keep-alive-chain.js'

/** The stream began with keep-alives (before the upstream's first byte) and had more between its events. */
function expectInterleaved(raw: string): void {
  expect(raw.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
  const firstData = raw.indexOf('data:')
  expect(firstData).toBeGreaterThan(0)
  expect(raw.indexOf(KEEP_ALIVE, firstData)).toBeGreaterThan(firstData)
}

describe('keep-alive on streams (keepAlive.streamMs: 50)', () => {
  const chain = useChain({ keepAlive: { streamMs: 50 } })

  it('an upstream whose head comes after several intervals: the 200 and keep-alive comments first, then the data', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('raw', { mock: SLOW }) })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    expect(res.headers['x-request-id']).toMatch(/^\w+$/)
    expectInterleaved(res.text)
    const withoutComments = res.text.split(KEEP_ALIVE).join('')
    expect(withoutComments).toContain('data: [DONE]\n\n')
    const text = [...withoutComments.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')
    expect(text).toBe('Echo: raw')
  })

  it("an upstream that sends its head at once and its first frame later: keep-alives after the upstream's head", async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: chatBody('head first', { mock: { first_frame_delay_ms: 300 } }),
    })
    expect(res.status).toBe(200)
    // The head is the upstream's (its content type), sent with the first keep-alive.
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    expect(res.text).toContain('data: [DONE]\n\n')
  })

  it('nothing while bytes flow: a stream whose events come quicker than the interval gets no comment', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('quick', { mock: { chunks: 8 } }) })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain(': keep-alive')
  })

  it('openai chat.completions stream: the whole text, keep-alives before the first byte and between events', async () => {
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0, fetch: spy.fetch })
    const stream = await client.chat.completions.create(Object.assign(chatBody('sdk chat'), { stream: true as const, mock: SLOW }))
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('Echo: sdk chat')
    expectInterleaved(spy.seen())
  })

  it('openai responses stream: every event, numbered as before, with keep-alives around them', async () => {
    const spy = spyingFetch()
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, maxRetries: 0, fetch: spy.fetch })
    chain.mock.steer('sdk responses', SLOW)
    const stream = await client.responses.create({ model: 'gpt', input: 'sdk responses', stream: true })
    let text = ''
    const numbers: number[] = []
    for await (const event of stream) {
      numbers.push(event.sequence_number)
      if (event.type === 'response.output_text.delta') text += event.delta
      if (event.type === 'response.completed') expect(event.response.status).toBe('completed')
    }
    expect(text).toBe('Echo: sdk responses')
    expect(numbers).toEqual(numbers.map((_, i) => i))
    expectInterleaved(spy.seen())
  })

  it('@google/genai generateContentStream: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk genai', SLOW)
    const original = globalThis.fetch
    // The SDK calls the global fetch; it is the spy for this test only.
    globalThis.fetch = spy.fetch
    try {
      const client = new GoogleGenAI({ apiKey: KEY_A, httpOptions: { baseUrl: chain.url } })
      let text = ''
      for await (const chunk of await client.models.generateContentStream({ model: GEMINI, contents: 'sdk genai' }))
        text += chunk.text ?? ''
      expect(text).toBe('Echo: sdk genai')
    } finally {
      globalThis.fetch = original
    }
    expectInterleaved(spy.seen())
  })

  it('Vercel ai streamText with @ai-sdk/openai: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk vercel', SLOW)
    const provider = createOpenAI({ apiKey: KEY_A, baseURL: `${chain.url}/v1`, fetch: spy.fetch })
    let failure: unknown
    const result = streamText({
      model: provider.chat('gpt'),
      prompt: 'sdk vercel',
      maxRetries: 0,
      onError: ({ error }) => {
        failure = error
      },
    })
    expect(await result.text).toBe('Echo: sdk vercel')
    expect(failure).toBeUndefined()
    expectInterleaved(spy.seen())
  })

  it('@anthropic-ai/sdk messages.stream: the whole text with keep-alives interleaved', async () => {
    const spy = spyingFetch()
    chain.mock.steer('sdk anthropic', SLOW)
    const client = new Anthropic({ apiKey: KEY_A, baseURL: chain.url, maxRetries: 0, fetch: spy.fetch })
    const stream = client.messages.stream({ model: CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'sdk anthropic' }] })
    expect(await stream.finalText()).toBe('Echo: sdk anthropic')
    expectInterleaved(spy.seen())
  })

  it("model-gateway/client's recovering fetch: a stream cut after keep-alives resumes where it was, the text whole", async () => {
    chain.mock.steer('client cut', { delay_ms: 300, chunks: 6, chunk_delay_ms: 120 })
    // The cut falls after the keep-alives and inside the second event: the client resumes from the gateway itself.
    const proxy = await startCuttingProxy(chain.url, () => ({ kind: 'cut-after-bytes', bytes: 600 }))
    try {
      const spy = spyingFetch()
      const steps: string[] = []
      const fetch = createRecoveringFetch({ baseUrls: [proxy.url, chain.url], fetch: spy.fetch, onEvent: (e) => steps.push(e.type) })
      const res = await fetch(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('client cut')),
      })
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(steps).toEqual(['attempt', 'resume'])
      const text = [...body.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')
      expect(text).toBe('Echo: client cut')
      expect(body).toContain('data: [DONE]')
      // Before the cut and in the resume alike, the comments came and passed through.
      expect(spy.seen().startsWith(KEEP_ALIVE)).toBe(true)
      expect(body.split(KEEP_ALIVE).length).toBeGreaterThan(3)
    } finally {
      await proxy.close()
    }
  })

  it('a model whose upstream fails after the keep-alive commit still falls back: the 200 stream carries the answer', async () => {
    chain.mock.steer('flaky-upstream', { delay_ms: 300, status: 503 })
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('fallback', { model: 'flaky' }) })
    expect(res.status).toBe(200)
    expect(res.text.startsWith(`${KEEP_ALIVE}${KEEP_ALIVE}`)).toBe(true)
    expect([...res.text.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('')).toBe('Echo: fallback')
    expect(chain.mock.requests.filter((r) => r.body.includes('"fallback"')).map((r) => JSON.parse(r.body).model)).toEqual([
      'flaky-upstream',
      'gpt',
    ])
  })
})

describe('keepAlive.streamMs: 0', () => {
  const chain = useChain({ keepAlive: { streamMs: 0 } })

  it('sends no comment, however long the upstream is quiet', async () => {
    const res = await call(`${chain.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('off', { mock: SLOW }) })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain(': keep-alive')
    expect(res.text.startsWith('data: ')).toBe(true)
  })
})

describe('keepAlive options', () => {
  const base = {
    upstreams: { oai: { type: 'openai' as const, baseUrl: 'http://127.0.0.1:9/v1' } },
    models: [{ id: 'gpt', upstream: 'oai' }],
    auth: { apiKeys: [KEY_A] },
  }
  const refusal = (keepAlive: unknown) => {
    try {
      createGateway({ ...base, keepAlive } as GatewayOptions)
    } catch (error) {
      return isGatewayError(error) ? `${error.code}: ${error.message}` : String(error)
    }
    return 'accepted'
  }

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '15000', 2 ** 31])('refuses streamMs %s, naming the option', (value) => {
    expect(refusal({ streamMs: value })).toBe(
      `invalid_options: keepAlive.streamMs must be a whole number of ms from 0 (off) to 2147483647, got ${String(value)}`,
    )
  })

  it('refuses a keepAlive that is not an object, and a misspelt key with the right one', () => {
    expect(refusal(15000)).toBe('invalid_options: keepAlive must be an object')
    expect(refusal({ streamMS: 100 })).toMatch(/^invalid_options: keepAlive\.streamMS is not an option; did you mean `streamMs`\?/)
  })

  it('takes 0, a whole number of ms, or nothing (the default)', async () => {
    for (const keepAlive of [{ streamMs: 0 }, { streamMs: 1 }, { streamMs: 60_000 }, {}, undefined]) {
      const gateway = createGateway({ ...base, keepAlive })
      await gateway.close()
    }
  })
})
