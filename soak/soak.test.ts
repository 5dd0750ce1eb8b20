// The soak (`npm run soak`): three gateway processes on one Redis of its own, real SDK clients making a bounded mix of
// calls against a mock upstream with random latency, while gateway processes are killed, Redis is restarted and
// client calls are cut at random points, all on a fixed seed. Each invariant is one test; the figures are printed.
// SOAK_SECONDS sets the length (default 600), SOAK_SEED the seed.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startMockUpstream } from '../src/testing/index.js'
import { ensureBuilt, type GatewayProcess, startGatewayProcess } from '../test/support/gateway-process.js'
import { call } from '../test/support/http.js'
import {
  anthropicCall,
  backgroundCreate,
  backgroundStatus,
  chatCall,
  geminiCall,
  isCut,
  KINDS,
  type Kind,
  type Outcome,
  type Target,
} from './calls.js'
import { type OwnRedis, seeded, startOwnRedis, tapUpstream, type UpstreamCall } from './support.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600)
const SEED = Number(process.env.SOAK_SEED ?? 39)
const OWNERS = ['sk-soak-alice', 'sk-soak-bob']
/** Calls in flight at once. */
const CONCURRENCY = 6
/** What a surviving gateway process may hold, and the longest it may stall its loop. */
const MEMORY_BOUND = 1024 * 1024 * 1024
const STALL_BOUND_MS = 100

/** The faults' own random source: their schedule does not depend on how the calls interleave. */
const faultRng = seeded(SEED)
const outcomes: Outcome[] = []
let upstream: UpstreamCall[] = []
const faults = { kills: 0, redisRestarts: 0, cuts: 0 }
/** The calls in flight: those sent to a process when it is killed are marked. */
const inFlight = new Set<Outcome>()
const peaks = { rss: 0, loopMs: 0 }
let gateways: Array<{ instance: number; gw: GatewayProcess }> = []
const everyProcess: GatewayProcess[] = []
let instances = 0
let redis: OwnRedis
let closeMock: () => Promise<void>
let steer: (marker: string, controls: Record<string, unknown> | undefined) => void

async function startGateway(): Promise<{ instance: number; gw: GatewayProcess }> {
  const gw = await startGatewayProcess({
    redisUrl: redis.url,
    namespace: 'soak',
    upstreamUrl: upstreamUrl,
    apiKeys: OWNERS,
    recovery: { streams: 'finish' },
    // Limits no call reaches: the ledger counts every call.
    limits: { requestsPerMinute: 1_000_000 },
    // One dollar a million tokens, in and out: the ledger's cost of the day is a thousand nano-dollars a token.
    pricing: { 'gpt-4o-mini': { input: 1, output: 1 }, 'gemini-2.5-flash': { input: 1, output: 1 } },
  })
  everyProcess.push(gw)
  return { instance: ++instances, gw }
}
let upstreamUrl = ''

/** One logical call: its kind, its owner, whether it is cut, and a repeat for keyed and retried calls. */
async function oneCall(n: number): Promise<void> {
  // Each call's choices come from its own number and the seed, whatever the order the workers reach it in.
  const rng = seeded((SEED * 1_000_003 + n) >>> 0)
  const kind = rng.pick(KINDS)
  const marker = `soak-m${n}`
  const owner = rng.pick(OWNERS)
  const stream = rng.chance(0.5)
  steer(marker, { delay_ms: rng.int(0, 800), chunks: rng.int(3, 30), chunk_delay_ms: rng.int(0, 40) })
  const cutAt = rng.chance(0.25) ? rng.int(0, 1200) : undefined
  const outcome: Outcome = { marker, kind, owner, instances: [], answered: false, cut: false }
  outcomes.push(outcome)
  inFlight.add(outcome)
  const target = (cutAfterMs: number | undefined, note = true): Target => {
    const { instance, gw } = rng.pick(gateways)
    if (note) outcome.instances.push(instance)
    return { url: gw.url, key: owner, cutAfterMs }
  }
  const attempt = async (run: () => Promise<void>) => {
    try {
      await run()
      outcome.answered = true
      outcome.error = undefined
    } catch (error) {
      outcome.answered = false
      if (isCut(error)) {
        outcome.cut = true
        faults.cuts++
      } else outcome.error = String((error as Error)?.message ?? error).slice(0, 200)
    }
  }
  try {
    if (kind === 'whole' || kind === 'stream') await attempt(() => chatCall(target(cutAt), marker, kind === 'stream'))
    else if (kind === 'keyed') {
      const headers = { 'idempotency-key': marker }
      await attempt(() => chatCall(target(cutAt), marker, stream, headers))
      // The repeat of the same key, sent whatever became of the first: at most one upstream call between them.
      await attempt(() => chatCall(target(undefined), marker, stream, headers))
    } else if (kind === 'retried') {
      await attempt(() => chatCall(target(cutAt), marker, stream, { 'x-stainless-retry-count': '0' }))
      if (!outcome.answered) await attempt(() => chatCall(target(undefined), marker, stream, { 'x-stainless-retry-count': '1' }))
    } else if (kind === 'anthropic') await attempt(() => anthropicCall(target(cutAt), marker, stream))
    else if (kind === 'gemini') await attempt(() => geminiCall(target(cutAt), marker))
    else await backgroundCall(outcome, target)
  } finally {
    inFlight.delete(outcome)
    steer(marker, undefined)
  }
}

/** A background response: created, then read (through any process) until it ends or a minute passes. */
async function backgroundCall(outcome: Outcome, target: (cut: number | undefined, note?: boolean) => Target): Promise<void> {
  // Read through any process: only the one that created it runs it.
  try {
    outcome.backgroundId = await backgroundCreate(target(undefined), outcome.marker)
  } catch (error) {
    outcome.error = String((error as Error)?.message ?? error).slice(0, 200)
    return
  }
  const giveUpAt = Date.now() + 60_000
  while (Date.now() < giveUpAt) {
    const status = await backgroundStatus(target(undefined, false), outcome.backgroundId)
    if (status === 'completed') {
      outcome.answered = true
      return
    }
    if (status === 'failed' || status === 'cancelled' || status === 'incomplete') {
      outcome.error = `background ${status}`
      return
    }
    await sleep(250)
  }
  outcome.error = 'background never ended'
}

/** Kills a gateway process (SIGKILL) or restarts Redis, in turn, at seeded intervals. */
async function injectFaults(until: number): Promise<void> {
  while (Date.now() < until) {
    await sleep(faultRng.int(4000, 9000))
    if (Date.now() >= until) return
    if (faultRng.chance(0.5)) {
      const index = faultRng.int(0, gateways.length - 1)
      const victim = gateways[index] as { instance: number; gw: GatewayProcess }
      for (const o of inFlight) if (o.instances.includes(victim.instance)) o.killed = true
      victim.gw.child.kill('SIGKILL')
      faults.kills++
      gateways = gateways.filter((g) => g !== victim)
      await sleep(faultRng.int(500, 2000))
      gateways.push(await startGateway())
    } else {
      faults.redisRestarts++
      await redis.restart(faultRng.int(500, 3000))
    }
  }
}

/** Samples every live process's memory and longest loop delay (a process's first sample, its start, is not counted). */
async function sampleProcesses(until: number): Promise<void> {
  const started = new Set<GatewayProcess>()
  while (Date.now() < until) {
    await sleep(2000)
    for (const { gw } of [...gateways]) {
      const memory = await gw.memory().catch(() => undefined)
      if (!memory || !started.has(gw)) {
        started.add(gw)
        continue
      }
      peaks.rss = Math.max(peaks.rss, memory.rss)
      peaks.loopMs = Math.max(peaks.loopMs, memory.loopMaxMs)
    }
  }
}

beforeAll(
  async () => {
    await ensureBuilt()
    redis = await startOwnRedis()
    const mock = await startMockUpstream({ record: false })
    upstream = tapUpstream(mock)
    upstreamUrl = mock.url
    steer = (marker, controls) => mock.steer(marker, controls)
    closeMock = () => mock.close()
    gateways = [await startGateway(), await startGateway(), await startGateway()]
    const until = Date.now() + SECONDS * 1000
    let next = 0
    const worker = async () => {
      while (Date.now() < until) await oneCall(next++)
    }
    await Promise.all([injectFaults(until), sampleProcesses(until), ...Array.from({ length: CONCURRENCY }, worker)])
    // Calls cut or left behind finish upstream and are kept: give them time before counting.
    await sleep(5000)
    await gatherRecords()
    ledger = await ledgerTokens()
    printFigures()
  },
  (SECONDS + 600) * 1000,
)

afterAll(async () => {
  await Promise.all(gateways.map(({ gw }) => gw.stop()))
  await closeMock?.()
  await redis?.stop()
})

/** Each owner's records by the marker in their request, and whether the other owner could read any of them. */
const records = new Map<string, { owner: string; requestId: string }>()
let crossOwnerReads = 0

async function gatherRecords(): Promise<void> {
  const gw = (gateways[0] as { gw: GatewayProcess }).gw
  for (const owner of OWNERS) {
    const other = OWNERS.find((o) => o !== owner) as string
    let after: string | undefined
    for (;;) {
      const page = await call(`${gw.url}/v1/recoveries?limit=100${after ? `&after=${after}` : ''}`, {
        headers: { authorization: `Bearer ${owner}` },
      })
      const items = ((page.json as { items?: Array<{ request_id: string }> })?.items ?? []).map((item) => item.request_id)
      for (const requestId of items) {
        const record = await call(`${gw.url}/v1/recoveries/${requestId}`, { headers: { authorization: `Bearer ${owner}` } })
        const marker = /soak-m\d+/.exec(record.text)?.[0]
        if (marker) records.set(marker, { owner, requestId })
        const stranger = await call(`${gw.url}/v1/recoveries/${requestId}`, { headers: { authorization: `Bearer ${other}` } })
        if (stranger.status !== 404) crossOwnerReads++
      }
      if (!(page.json as { has_more?: boolean })?.has_more || items.length === 0) break
      after = items.at(-1)
    }
  }
}

const callsFor = (marker: string) => upstream.filter((c) => c.marker === marker)
/** A call one of whose processes was killed: what it cost cannot be held against the gateway. */
const touchedKilled = (o: Outcome) => o.killed === true
const repeated = (kinds: Kind[]) => outcomes.filter((o) => kinds.includes(o.kind))
const doubles = (kinds: Kind[]) => repeated(kinds).filter((o) => !touchedKilled(o) && callsFor(o.marker).length > 1)
const doublesApart = () => outcomes.filter((o) => touchedKilled(o) && callsFor(o.marker).length > 1)
/** Answers the client did not get although the upstream finished them. */
const lostAnswers = () => outcomes.filter((o) => !o.answered && o.kind !== 'background' && callsFor(o.marker).some((c) => c.finished))
const missing = () => lostAnswers().filter((o) => !touchedKilled(o) && !records.has(o.marker))
const paidReportedFailed = () =>
  outcomes.filter((o) => !o.answered && !o.cut && !touchedKilled(o) && callsFor(o.marker).some((c) => c.finished))

/** The ledger's tokens, all owners together (by the owner ids usage events carry): its cost of the day, by the price. */
async function ledgerTokens(): Promise<number> {
  const gw = (gateways[0] as { gw: GatewayProcess }).gw
  const owners = new Set(everyProcess.flatMap((p) => p.events.flatMap((e) => (e.usage ? [e.usage.owner] : []))))
  let cost = 0
  for (const owner of owners) cost += (await gw.usage(owner).catch(() => ({ cost: Number.NaN }))).cost
  return cost / 1000
}
/** Tokens of the calls the upstream finished: of those whose processes all lived, and of all. */
const upstreamTokens = (all: boolean) =>
  outcomes
    .filter((o) => all || !touchedKilled(o))
    .flatMap((o) => callsFor(o.marker))
    .filter((c) => c.finished)
    .reduce((sum, c) => sum + c.tokens, 0)
let ledger = 0

function printFigures(): void {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, outcomes.filter((o) => o.kind === k).length]))
  const lines = [
    `soak figures (seed ${SEED}, ${SECONDS} s)`,
    `  calls made: ${outcomes.length} ${JSON.stringify(byKind)}; upstream calls: ${upstream.length}`,
    `  faults injected: ${faults.kills} gateway kills, ${faults.redisRestarts} Redis restarts, ${faults.cuts} client cuts`,
    `  answered: ${outcomes.filter((o) => o.answered).length}; failed: ${outcomes.filter((o) => !o.answered && !o.cut).length}`,
    `  lost answers: ${lostAnswers().length}, found in recoveries: ${lostAnswers().filter((o) => records.has(o.marker)).length}, missing: ${missing().length}`,
    `  double upstream calls: keyed ${doubles(['keyed']).length}, retried ${doubles(['retried']).length}, other ${doubles(['whole', 'stream', 'anthropic', 'gemini', 'background']).length}; apart (process killed): ${doublesApart().length}`,
    `  paid responses reported failed: ${paidReportedFailed().length}`,
    `  ledger tokens: ${ledger}; upstream tokens of completed calls: ${upstreamTokens(false)} (${upstreamTokens(true)} with killed processes' calls)`,
    `  cross-owner reads: ${crossOwnerReads} of ${records.size} records`,
    `  peak RSS of a live process: ${(peaks.rss / 1048576).toFixed(0)} MiB; longest loop delay: ${peaks.loopMs.toFixed(0)} ms`,
    `  unhandled rejections: ${everyProcess.filter((gw) => gw.events.some((e) => e.unhandled)).length}`,
  ]
  for (const o of [...missing(), ...paidReportedFailed()].slice(0, 10)) lines.push(`  e.g. ${JSON.stringify(o)}`)
  console.log(lines.join('\n'))
}

it('makes calls and injects every kind of fault', () => {
  expect(outcomes.length).toBeGreaterThan(0)
  expect(faults.kills + faults.redisRestarts).toBeGreaterThan(0)
})

it('costs at most one upstream call for every repeated key and SDK retry (a killed process counted apart)', () => {
  expect(doubles(['keyed']).map((o) => o.marker)).toEqual([])
  expect(doubles(['retried']).map((o) => o.marker)).toEqual([])
})

it("keeps every answer a client lost in its owner's recoveries", () => {
  expect(missing().map((o) => o.marker)).toEqual([])
})

it('reports no paid response as failed', () => {
  expect(paidReportedFailed().map((o) => `${o.marker}: ${o.error}`)).toEqual([])
})

it("lets no owner read another's records", () => {
  expect(crossOwnerReads).toBe(0)
})

it("charges the ledger the upstream's usage for completed calls (a killed process's calls may be charged or not)", () => {
  expect(ledger).toBeGreaterThanOrEqual(upstreamTokens(false))
  expect(ledger).toBeLessThanOrEqual(upstreamTokens(true))
})

it(`keeps every surviving process within ${MEMORY_BOUND / 1048576} MiB and its loop stalls under ${STALL_BOUND_MS} ms`, () => {
  expect(peaks.rss).toBeLessThan(MEMORY_BOUND)
  expect(peaks.loopMs).toBeLessThan(STALL_BOUND_MS)
})

it('sees no unhandled rejection in any process', () => {
  expect(everyProcess.flatMap((gw) => gw.events.flatMap((e) => (e.unhandled ? [e.unhandled] : [])))).toEqual([])
})
