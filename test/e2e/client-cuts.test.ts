import OpenAI from 'openai'
import { expect, it } from 'vitest'
import { freePort } from '../../bench/lib/free-port.mjs'
import { createRecoveringFetch, type RecoveringFetchEvent } from '../../src/client/index.js'
import { CLAUDE_MODEL } from '../support/anthropic-sdks.js'
import { always, CLIENT_KEY, inPool, PASS, useClientChain } from '../support/client-chain.js'
import { type CutKind, randomCuts, scheduled } from '../support/cutting-proxy.js'
import { bearer } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { describeWithRedis } from '../support/redis.js'
import { type SdkLeg, sdkLegs } from '../support/sdk-legs.js'

const RUN = `mg-client-cuts-${process.pid}-${Date.now().toString(36)}`
/** Model calls per SDK leg under random cuts: at least 200 in all on every Node. */
const CALLS_PER_LEG = 50
const CUT_RATE = 0.3
const CUT_KINDS: CutKind[] = ['reset', 'answer', 'timeout', 'cut-after-ms', 'cut-after-bytes']

await describeWithRedis('model-gateway/client: real SDKs through cutting proxies to two gateway processes', () => {
  // Upstream answers take a little while, so a cut after some milliseconds often lands while the gateway works.
  const chain = useClientChain(RUN, 30)
  const legs = sdkLegs()

  /** Sends every job through `fetch`, `width` at a time; returns each reply with its prompt. */
  const askAll = (jobs: Array<{ leg: SdkLeg; prompt: string }>, fetch: typeof globalThis.fetch, base: string, width: number) =>
    inPool(jobs, width, async ({ leg, prompt }) => ({ prompt, text: await leg.ask({ base, apiKey: CLIENT_KEY, fetch }, prompt) }))

  const jobsFor = (selected: SdkLeg[], perLeg: number, tag: string) =>
    selected.flatMap((leg) =>
      Array.from({ length: perLeg }, (_, i) => ({ leg, prompt: `${tag} [${leg.name}${leg.stream ? ' stream' : ''} #${i}]` })),
    )

  /** Every call got the mock's exact answer from one upstream call, and about CUT_RATE of the attempts were cut; returns those. */
  function expectServedOnceUnderCuts(replies: Array<{ prompt: string; text: string }>) {
    for (const { prompt, text } of replies) {
      expect(text, prompt).toBe(`Echo: ${prompt}`)
      expect(chain.upstreamCalls(prompt), prompt).toBe(1)
    }
    const seen = chain.proxies.flatMap((p) => p.log)
    const cut = seen.filter((r) => r.fate.kind !== 'pass')
    expect(cut.length / seen.length).toBeGreaterThan(0.2)
    expect(cut.length / seen.length).toBeLessThan(0.4)
    return cut
  }

  it(`with cuts on ${CUT_RATE * 100} % of attempts, every non-streamed call of every SDK succeeds with the upstream's content, one upstream call each`, {
    timeout: 120_000,
  }, async () => {
    const selected = legs.filter((leg) => !leg.stream)
    chain.cut(randomCuts(15, CUT_RATE, { kinds: CUT_KINDS }), randomCuts(16, CUT_RATE, { kinds: CUT_KINDS }))
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, attempts: 12 })
    const jobs = jobsFor(selected, CALLS_PER_LEG, 'whole')
    expect(jobs.length).toBeGreaterThanOrEqual(100)
    const replies = await askAll(jobs, fetch, chain.bases[0], 12)
    const cut = expectServedOnceUnderCuts(replies)
    expect(new Set(cut.map((r) => r.fate.kind))).toEqual(new Set(CUT_KINDS))
  })

  it(`with cuts on ${CUT_RATE * 100} % of attempts, every streamed call of every SDK gets the whole stream, resumed where it was cut, one upstream call each`, {
    timeout: 120_000,
  }, async () => {
    const selected = legs.filter((leg) => leg.stream)
    // Streams of some length, paced, so cuts land before, inside and between their events.
    chain.mock.steer('streamed [', { chunks: 8, chunk_delay_ms: 4 })
    const options = { kinds: CUT_KINDS, maxBytes: 2500 }
    chain.cut(randomCuts(25, CUT_RATE, options), randomCuts(26, CUT_RATE, options))
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, attempts: 12, onEvent: (e) => events.push(e) })
    const jobs = jobsFor(selected, CALLS_PER_LEG, 'streamed')
    expect(jobs.length).toBeGreaterThanOrEqual(100)
    const replies = await askAll(jobs, fetch, chain.bases[0], 12)
    expectServedOnceUnderCuts(replies)
    // Streams were cut after they began and resumed, not only sent again.
    expect(events.filter((e) => e.type === 'resume' && e.lastEventId > 0).length).toBeGreaterThan(0)
  })

  it('a stream the gateway does not know how to resume is asked for again with its key and spliced from its replay', async () => {
    // The resume finds nothing (here the proxy says so; in life the gateway saw the stream delivered whole while a proxy
    // still held its end): the call sent again is answered from its kept answer, and the events passed on are dropped.
    chain.mock.steer('replayed stream', { chunks: 8, chunk_delay_ms: 4 })
    chain.cut(scheduled([{ kind: 'cut-after-bytes', bytes: 700 }]), scheduled([{ kind: 'answer', status: 404 }]))
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    const leg = legs.find((l) => l.stream) as SdkLeg
    const text = await leg.ask({ base: chain.bases[0], apiKey: CLIENT_KEY, fetch }, 'replayed stream')
    expect(text).toBe('Echo: replayed stream')
    expect(events.map((e) => e.type)).toEqual(['attempt', 'resume', 'attempt', 'replay'])
    expect(chain.upstreamCalls('replayed stream')).toBe(1)
  })

  it("a Messages stream cut half-way is resumed with the caller's x-api-key alone: one upstream call", async () => {
    chain.mock.steer('anthropic resumed', { chunks: 8, chunk_delay_ms: 4 })
    chain.cut(scheduled([{ kind: 'cut-after-bytes', bytes: 900 }]))
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    // The key as curl and Anthropic's older SDKs send it: in x-api-key, with no Authorization header.
    const res = await fetch(`${chain.bases[0]}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': CLIENT_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: CLAUDE_MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'anthropic resumed' }],
      }),
    })
    const text = [...(await res.text()).matchAll(/"text_delta","text":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('')
    expect(text).toBe('Echo: anthropic resumed')
    // The stream went on from the Recoveries API, which was sent the same key.
    expect(events.filter((e) => e.type === 'resume' && e.lastEventId > 0)).toHaveLength(1)
    expect(events.map((e) => e.type)).not.toContain('replay')
    expect(chain.upstreamCalls('anthropic resumed')).toBe(1)
  })

  it('with the main base URL refusing connections, every call of every SDK is served through the alternate', {
    timeout: 60_000,
  }, async () => {
    chain.cut(PASS, PASS)
    const main = `http://127.0.0.1:${await freePort()}`
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: [main, chain.bases[1]], onEvent: (e) => events.push(e) })
    const jobs = jobsFor(legs, 3, 'main refused')
    const replies = await askAll(jobs, fetch, main, 1)
    for (const { prompt, text } of replies) {
      expect(text, prompt).toBe(`Echo: ${prompt}`)
      expect(chain.upstreamCalls(prompt), prompt).toBe(1)
    }
    expect(chain.proxies[1].log.filter((r) => r.method === 'POST')).toHaveLength(jobs.length)
    // The first call found the main address down; the later ones started at the alternate.
    const attemptsAtMain = events.filter((e) => e.type === 'attempt' && e.url.startsWith(main))
    expect(attemptsAtMain).toHaveLength(1)
  })

  it('with the main base URL a black hole, calls fail over after attemptTimeoutMs and later ones start at the alternate', {
    timeout: 60_000,
  }, async () => {
    chain.cut(always({ kind: 'hang' }), PASS)
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, attemptTimeoutMs: 500, onEvent: (e) => events.push(e) })
    const jobs = jobsFor(legs, 2, 'main silent')
    const replies = await askAll(jobs, fetch, chain.bases[0], 1)
    for (const { prompt, text } of replies) expect(text, prompt).toBe(`Echo: ${prompt}`)
    expect(events.filter((e) => e.type === 'failover').map((e) => (e.type === 'failover' ? e.reason : ''))).toEqual(['timeout'])
    expect(chain.proxies[0].log).toHaveLength(1)
    expect(chain.proxies[1].log).toHaveLength(jobs.length)
  })

  it('the app aborting a stream half-way stops its upstream call: the gateway is asked to cancel it', { timeout: 30_000 }, async () => {
    chain.cut(PASS, PASS)
    chain.mock.steer('aborted half-way', { chunks: 200, chunk_delay_ms: 20 })
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    const openai = new OpenAI({ baseURL: `${chain.bases[0]}/v1`, apiKey: CLIENT_KEY, fetch, maxRetries: 0 })
    const before = chain.mock.abortedStreams
    const controller = new AbortController()
    const messages = [{ role: 'user' as const, content: 'aborted half-way' }]
    const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }, { signal: controller.signal })
    let chunks = 0
    // The SDK ends its iteration quietly on the app's own abort.
    for await (const _ of stream) if (++chunks === 3) controller.abort()
    expect(chunks).toBe(3)
    const cancel = await eventually(() => events.find((e) => e.type === 'cancel'))
    expect(cancel).toMatchObject({ url: expect.stringMatching(/\/v1\/recoveries\/[0-9A-Z]{26}\/cancel$/) })
    // A keyed stream whose client left runs to its end: only the cancel stops its upstream call.
    await eventually(() => chain.mock.abortedStreams > before, 10_000)
    expect(chain.upstreamCalls('aborted half-way')).toBe(1)
    // What came before the cancel is kept, whichever the gateway heard first: the cut or the cancel.
    const requestId = /\/v1\/recoveries\/([0-9A-Z]{26})\/cancel$/.exec(String((cancel as { url: string }).url))?.[1]
    const record = await eventually(async () => {
      const res = await call(`${chain.bases[1]}/v1/recoveries/${requestId}`, { headers: bearer(CLIENT_KEY) })
      return res.status === 200 ? (res.json as { interrupted_reason: string }) : undefined
    }, 10_000)
    expect(record.interrupted_reason).toBe('cancelled')
  })

  it('the app aborting a stream before its first byte still stops its upstream call once its head names it', {
    timeout: 30_000,
  }, async () => {
    chain.cut(PASS, PASS)
    chain.mock.steer('aborted early', { delay_ms: 400, chunks: 200, chunk_delay_ms: 20 })
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, onEvent: (e) => events.push(e) })
    const before = chain.mock.abortedStreams
    const controller = new AbortController()
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'aborted early' }], stream: true })
    const pending = fetch(`${chain.bases[0]}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(CLIENT_KEY) },
      body,
      signal: controller.signal,
    })
    await eventually(() => chain.upstreamCalls('aborted early') === 1)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    // The request went on only until its head named the call; then the gateway was asked to cancel it.
    await eventually(() => events.find((e) => e.type === 'cancel'), 10_000)
    await eventually(() => chain.mock.abortedStreams > before, 10_000)
  })
})
