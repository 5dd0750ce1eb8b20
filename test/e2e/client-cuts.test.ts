import { expect, it } from 'vitest'
import { createRecoveringFetch, type RecoveringFetchEvent } from '../../src/client/index.js'
import { always, CLIENT_KEY, inPool, PASS, useClientChain } from '../support/client-chain.js'
import { type CutKind, randomCuts } from '../support/cutting-proxy.js'
import { freePort } from '../support/free-port.mjs'
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

  it(`with cuts on ${CUT_RATE * 100} % of attempts, every non-streamed call of every SDK succeeds with the upstream's content, one upstream call each`, {
    timeout: 120_000,
  }, async () => {
    const selected = legs.filter((leg) => !leg.stream)
    chain.cut(randomCuts(15, CUT_RATE, { kinds: CUT_KINDS }), randomCuts(16, CUT_RATE, { kinds: CUT_KINDS }))
    const fetch = createRecoveringFetch({ baseUrls: chain.bases, attempts: 12 })
    const jobs = jobsFor(selected, CALLS_PER_LEG, 'whole')
    expect(jobs.length).toBeGreaterThanOrEqual(100)
    const replies = await askAll(jobs, fetch, chain.bases[0], 12)
    for (const { prompt, text } of replies) {
      expect(text, prompt).toBe(`Echo: ${prompt}`)
      expect(chain.upstreamCalls(prompt), prompt).toBe(1)
    }
    const seen = chain.proxies.flatMap((p) => p.log)
    const cut = seen.filter((r) => r.fate.kind !== 'pass')
    expect(cut.length / seen.length).toBeGreaterThan(0.2)
    expect(cut.length / seen.length).toBeLessThan(0.4)
    expect(new Set(cut.map((r) => r.fate.kind))).toEqual(new Set(CUT_KINDS))
  })

  it('with the main base URL refusing connections, every call of every SDK is served through the alternate', {
    timeout: 60_000,
  }, async () => {
    chain.cut(PASS, PASS)
    const main = `http://127.0.0.1:${await freePort()}`
    const events: RecoveringFetchEvent[] = []
    const fetch = createRecoveringFetch({ baseUrls: [main, chain.bases[1]], onEvent: (e) => events.push(e) })
    const jobs = jobsFor(
      legs.filter((leg) => !leg.stream),
      3,
      'main refused',
    )
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
    const jobs = jobsFor(
      legs.filter((leg) => !leg.stream),
      2,
      'main silent',
    )
    const replies = await askAll(jobs, fetch, chain.bases[0], 1)
    for (const { prompt, text } of replies) expect(text, prompt).toBe(`Echo: ${prompt}`)
    expect(events.filter((e) => e.type === 'failover').map((e) => (e.type === 'failover' ? e.reason : ''))).toEqual(['timeout'])
    expect(chain.proxies[0].log).toHaveLength(1)
    expect(chain.proxies[1].log).toHaveLength(jobs.length)
  })
})
