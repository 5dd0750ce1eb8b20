import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { createRecoveringFetch, findRecoveringFetchError, RecoveringFetchError, type RecoveringFetchEvent } from '../../src/client/index.js'
import { chatBody } from '../support/bodies.js'
import { always, CLIENT_KEY, PASS, useClientChain } from '../support/client-chain.js'
import { type Fate, scheduled } from '../support/cutting-proxy.js'
import { bearer } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { describeWithRedis } from '../support/redis.js'

const RUN = `mg-client-rules-${process.pid}-${Date.now().toString(36)}`
const CHAT = '/v1/chat/completions'

await describeWithRedis('model-gateway/client: what it retries, with which key, and how it gives up', () => {
  const chain = useClientChain(RUN)
  const post = (fetch: typeof globalThis.fetch, body: unknown, headers: Record<string, string> = {}, base = chain.bases[0]) =>
    fetch(`${base}${CHAT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(CLIENT_KEY), ...headers },
      body: JSON.stringify(body),
    })
  /** Every model call both proxies saw since the last `cut`, and their Idempotency-Keys. */
  const seen = () => chain.proxies.flatMap((p) => p.log).filter((r) => r.path === CHAT)
  const keysSeen = () => seen().map((r) => r.headers['idempotency-key'])

  it('sends one Idempotency-Key on every attempt and failover of a call, a new one per call, and the caller’s own', async () => {
    chain.cut(scheduled([{ kind: 'reset' }]), scheduled([{ kind: 'answer', status: 502 }]))
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    const first = await post(fetch, chatBody('one key per call'))
    expect(first.status).toBe(200)
    expect((await first.json()).choices[0].message.content).toBe('Echo: one key per call')
    const firstKeys = keysSeen()
    expect(firstKeys).toHaveLength(3)
    expect(new Set(firstKeys).size).toBe(1)
    expect(firstKeys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(events.filter((e) => e.type === 'failover').map((e) => [e.from, e.to, e.reason])).toEqual([
      [chain.bases[0], chain.bases[1], 'network error'],
      [chain.bases[1], chain.bases[0], 'status 502'],
    ])
    expect(chain.upstreamCalls('one key per call')).toBe(1)

    await (await post(fetch, chatBody('the next call'))).text()
    await (await post(fetch, chatBody('a call with its own key'), { 'idempotency-key': 'caller-key-1' })).text()
    // Both went to the main base, which answered its last attempt of the first call.
    const [second, third] = chain.proxies[0].log.slice(2).map((r) => r.headers['idempotency-key'])
    expect(second).not.toBe(firstKeys[0])
    expect(third).toBe('caller-key-1')
  })

  const retried: Array<[string, Fate]> = [
    ['408', { kind: 'answer', status: 408 }],
    ['409 with retry-after: 0', { kind: 'answer', status: 409, headers: { 'retry-after': '0' } }],
    ['429 with retry-after: 0', { kind: 'answer', status: 429, headers: { 'retry-after': '0' } }],
    ['502', { kind: 'answer', status: 502 }],
    ['503', { kind: 'answer', status: 503 }],
    ['504', { kind: 'answer', status: 504 }],
    ['520', { kind: 'answer', status: 520 }],
    ['524', { kind: 'answer', status: 524 }],
    ['a CDN 504 after the request reached the gateway', { kind: 'timeout', status: 504, ms: 20 }],
  ]
  for (const [what, fate] of retried) {
    it(`retries on the next base after ${what}: one upstream call`, async () => {
      chain.cut(scheduled([fate]))
      const marker = `retried after ${what}`
      const answer = await post(createRecoveringFetch({ baseUrls: chain.bases }), chatBody(marker, { mock: { delay_ms: 60 } }))
      expect(answer.status).toBe(200)
      expect((await answer.json()).choices[0].message.content).toBe(`Echo: ${marker}`)
      expect(chain.proxies.map((p) => p.log.length)).toEqual([1, 1])
      expect(chain.upstreamCalls(marker)).toBe(1)
    })
  }

  it('waits the second a 409 without retry-after asks for, as it announces', async () => {
    chain.cut(scheduled([{ kind: 'answer', status: 409 }]))
    const events: RecoveringFetchEvent[] = []
    const answer = await post(createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) }), chatBody('in flight'))
    expect(answer.status).toBe(200)
    expect(events.find((e) => e.type === 'failover')).toMatchObject({ status: 409, waitMs: 1000 })
  })

  const kept: Array<[string, Fate]> = [
    ['400', { kind: 'answer', status: 400 }],
    ['401', { kind: 'answer', status: 401 }],
    ['404', { kind: 'answer', status: 404 }],
    ['422', { kind: 'answer', status: 422 }],
    ['429 without retry-after', { kind: 'answer', status: 429 }],
    ['409 asking for two minutes', { kind: 'answer', status: 409, headers: { 'retry-after': '120' } }],
    ['500', { kind: 'answer', status: 500 }],
  ]
  for (const [what, fate] of kept) {
    it(`hands a ${what} to the app after one request`, async () => {
      chain.cut(always(fate), always(fate))
      const answer = await post(createRecoveringFetch({ baseUrls: chain.bases }), chatBody(`kept ${what}`))
      expect(answer.status).toBe((fate as { status: number }).status)
      expect(seen()).toHaveLength(1)
    })
  }

  it('hands the gateway’s own 400 and 401 to the app after one request', async () => {
    chain.cut(PASS, PASS)
    const fetch = createRecoveringFetch({ baseUrls: chain.bases })
    expect((await post(fetch, chatBody('too hot', { temperature: 5 }))).status).toBe(400)
    expect((await post(fetch, chatBody('wrong key'), { authorization: 'Bearer sk-nobody' })).status).toBe(401)
    expect(seen()).toHaveLength(2)
  })

  it('gives up after `attempts` failed requests with a RecoveringFetchError carrying the key, also behind the SDK’s error', async () => {
    chain.cut(always({ kind: 'answer', status: 502 }), always({ kind: 'answer', status: 504 }))
    const fetch = createRecoveringFetch({ baseUrls: chain.bases })
    const error = await post(fetch, chatBody('never through')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RecoveringFetchError)
    expect(error).toMatchObject({ name: 'RecoveringFetchError', attempts: 4, status: 504, requestId: undefined })
    expect(keysSeen()).toEqual(Array(4).fill((error as RecoveringFetchError).idempotencyKey))

    const openai = new OpenAI({ baseURL: `${chain.bases[0]}/v1`, apiKey: CLIENT_KEY, fetch, maxRetries: 0 })
    const sdkError = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e)
    expect(sdkError).toBeInstanceOf(OpenAI.APIConnectionError)
    expect(findRecoveringFetchError(sdkError)).toMatchObject({ attempts: 4, idempotencyKey: expect.any(String) })
    expect(chain.upstreamCalls('never through')).toBe(0)
  })

  it('a call whose every answer is cut after its head ends with its requestId; a repeat of its key is the kept answer', async () => {
    chain.cut(always({ kind: 'cut-after-bytes', bytes: 0 }), always({ kind: 'cut-after-bytes', bytes: 10 }))
    const body = chatBody('cut after every head')
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, attempts: 3, onEvent: (e) => events.push(e) })
    const error = (await post(fetch, body).catch((e) => e)) as RecoveringFetchError
    expect(error).toBeInstanceOf(RecoveringFetchError)
    expect(error.requestId).toMatch(/^[0-9A-Z]{26}$/)
    expect(seen()).toHaveLength(3)
    // The second and third attempts were answered from the first one's kept answer, then cut too.
    const { idempotencyKey } = error
    expect(events.filter((e) => e.type === 'replay')).toEqual([
      { type: 'replay', requestId: error.requestId, url: `${chain.bases[1]}${CHAT}`, idempotencyKey },
      { type: 'replay', requestId: error.requestId, url: `${chain.bases[0]}${CHAT}`, idempotencyKey },
    ])

    const again = await call(`${chain.gateways[1].url}${CHAT}`, {
      headers: { ...bearer(CLIENT_KEY), 'idempotency-key': error.idempotencyKey },
      body,
    })
    expect(again.status).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['x-request-id']).toBe(error.requestId)
    expect(again.json.choices[0].message.content).toBe('Echo: cut after every head')
    expect(chain.upstreamCalls('cut after every head')).toBe(1)
  })

  /** Sends a model call through `fetch` under the app's `signal`. */
  const aborting = (fetch: typeof globalThis.fetch, marker: string, signal: AbortSignal) =>
    fetch(`${chain.bases[0]}${CHAT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(CLIENT_KEY) },
      body: JSON.stringify(chatBody(marker)),
      signal,
    })

  it('the app’s abort while an attempt waits for its answer rejects at once with the app’s reason; nothing more is sent', async () => {
    chain.cut(always({ kind: 'hang' }), PASS)
    const controller = new AbortController()
    const pending = aborting(createRecoveringFetch({ baseUrls: chain.bases }), 'aborted while waiting', controller.signal)
    await eventually(() => chain.proxies[0].log.length === 1)
    controller.abort(new Error('the app gave up'))
    await expect(pending).rejects.toThrow('the app gave up')
    expect(chain.proxies[1].log).toHaveLength(0)
  })

  it('the app’s abort during the wait a 409 asked for rejects at once; nothing more is sent', async () => {
    chain.cut(always({ kind: 'answer', status: 409, headers: { 'retry-after': '30' } }), PASS)
    const controller = new AbortController()
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    const pending = aborting(fetch, 'aborted in a wait', controller.signal)
    await eventually(() => events.some((e) => e.type === 'failover'))
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    expect(chain.proxies[1].log).toHaveLength(0)
  })

  it('passes other requests through untouched: no key and no retry', async () => {
    chain.cut(always({ kind: 'reset' }), PASS)
    const fetch = createRecoveringFetch({ baseUrls: [chain.bases[0]] })
    await expect(fetch(`${chain.bases[0]}/v1/models`)).rejects.toThrow(TypeError)
    expect(chain.proxies[0].log).toHaveLength(1)
    expect(chain.proxies[0].log[0]?.headers['idempotency-key']).toBeUndefined()
    // A model call under none of the base URLs.
    const elsewhere = await post(fetch, chatBody('not under a base'), {}, chain.bases[1])
    expect(elsewhere.status).toBe(200)
    expect(chain.proxies[1].log[0]?.headers['idempotency-key']).toBeUndefined()
  })
})

describe('createRecoveringFetch options', () => {
  it('refuses bad options with a TypeError naming them', () => {
    expect(() => createRecoveringFetch({ baseUrls: [] })).toThrow(/baseUrls/)
    expect(() => createRecoveringFetch({ baseUrls: ['ftp://x.example'] })).toThrow(/http/)
    expect(() => createRecoveringFetch({ baseUrls: ['https://x.example?a=1'] })).toThrow(/query/)
    expect(() => createRecoveringFetch({ baseUrls: ['https://x.example'], attempts: 0 })).toThrow(/attempts/)
    expect(() => createRecoveringFetch({ baseUrls: ['https://x.example'], attemptTimeoutMs: -1 })).toThrow(/attemptTimeoutMs/)
  })
})
