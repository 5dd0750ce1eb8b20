// The soak (`npm run soak`): three gateway processes on one Redis of its own, real SDK clients making a bounded mix of
// calls against a mock upstream with random latency, while gateway processes are killed, Redis is restarted and
// client calls are cut at random points, all on a fixed seed. Each invariant is one test; the figures are printed.
// SOAK_SECONDS sets the length (default 600), SOAK_SEED the seed.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startMockUpstream } from '../src/testing/index.js'
import { ensureBuilt, type GatewayProcess, startGatewayProcess } from '../test/support/gateway-process.js'
import { call, eventually } from '../test/support/http.js'
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
/** The shortest wait before an SDK's retry (openai: 0.5 s, less up to a quarter of jitter). */
const SDK_RETRY_DELAY_MS = 375
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
/** When each killed process (by instance number) was killed (ms since the epoch). */
const killedAt = new Map<number, number>()
/** When Redis was down (ms since the epoch, from its kill to its answering again). */
const outages: Array<{ from: number; to: number }> = []
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
/** When the calls began (ms since the epoch): the figures give times from it. */
let startedAt = 0

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
  const outcome: Outcome = { marker, kind, owner, instances: [], answered: false, cut: false, startedAt: Date.now(), cutsAt: [] }
  outcomes.push(outcome)
  inFlight.add(outcome)
  const target = (cutAfterMs: number | undefined, note = true): Target => {
    const { instance, gw } = rng.pick(gateways)
    if (note) outcome.instances.push(instance)
    return { url: gw.url, key: owner, cutAfterMs, onCut: (at) => outcome.cutsAt.push(at) }
  }
  const attempt = async (run: () => Promise<void>) => {
    try {
      await run()
      outcome.answered = true
      outcome.error = undefined
    } catch (error) {
      // The repeat of a key whose first attempt was answered: the answer reached its client whatever the repeat got.
      if (outcome.answered) {
        outcome.repeatError = String((error as Error)?.message ?? error).slice(0, 200)
        return
      }
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
      if (!outcome.answered) {
        // As soon as an SDK retries: the openai SDK waits 0.5 s less a quarter of jitter.
        await sleep(SDK_RETRY_DELAY_MS)
        await attempt(() => chatCall(target(undefined), marker, stream, { 'x-stainless-retry-count': '1' }))
      }
    } else if (kind === 'anthropic') await attempt(() => anthropicCall(target(cutAt), marker, stream))
    else if (kind === 'gemini') await attempt(() => geminiCall(target(cutAt), marker))
    else await backgroundCall(outcome, target)
  } finally {
    outcome.endedAt = Date.now()
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
      killedAt.set(victim.instance, Date.now())
      faults.kills++
      gateways = gateways.filter((g) => g !== victim)
      await sleep(faultRng.int(500, 2000))
      gateways.push(await startGateway())
    } else {
      faults.redisRestarts++
      const outage = { from: Date.now(), to: Number.POSITIVE_INFINITY }
      outages.push(outage)
      await redis.restart(faultRng.int(500, 3000))
      outage.to = Date.now()
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
    startedAt = Date.now()
    const until = startedAt + SECONDS * 1000
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
/**
 * How long after its upstream call ended a process may still be keeping a call's record or answer: a kill within it
 * may lose them.
 */
const KEEPING_MS = 2000
/**
 * A call one of whose processes was killed while it ran there: what it cost cannot be held against the gateway. A
 * call its client cut goes on in the process: a kill before its upstream call ended (and its record was kept) counts.
 */
const touchedKilled = (o: Outcome) => {
  if (o.killed === true) return true
  const ends = callsFor(o.marker).map((c) => c.finishedAt ?? Number.POSITIVE_INFINITY)
  const ranUntil = (ends.length === 0 ? (o.endedAt ?? Number.POSITIVE_INFINITY) : Math.max(...ends)) + KEEPING_MS
  return o.instances.some((i) => {
    const at = killedAt.get(i)
    return at !== undefined && at >= o.startedAt && at <= ranUntil
  })
}
const repeated = (kinds: Kind[]) => outcomes.filter((o) => kinds.includes(o.kind))
/**
 * How long after Redis answers again a process's client may still be reconnecting: the guide's settings reconnect
 * within about 0.6 s (docs/guides/redis.md); a call it takes meanwhile finds the store down.
 */
const RECONNECT_MS = 1000
/** A call that ran while Redis was down: SDK retries without a key then run open by design (options.md, failOpen). */
const duringOutage = (o: Outcome) =>
  outages.some((w) => o.startedAt <= w.to + RECONNECT_MS && (o.endedAt ?? Number.POSITIVE_INFINITY) >= w.from)
const doubledAny = (kinds: Kind[]) => repeated(kinds).filter((o) => !touchedKilled(o) && callsFor(o.marker).length > 1)
/** SDK retries that doubled while Redis was down: allowed, counted apart. */
const retriesOpenInOutage = () => doubledAny(['retried']).filter(duringOutage)
const doubles = (kinds: Kind[]) => doubledAny(kinds).filter((o) => !(o.kind === 'retried' && duringOutage(o)))
const doublesApart = () => outcomes.filter((o) => touchedKilled(o) && callsFor(o.marker).length > 1)
/** Answers the client did not get although the upstream finished them. */
const lostAnswers = () => outcomes.filter((o) => !o.answered && o.kind !== 'background' && callsFor(o.marker).some((c) => c.finished))
/**
 * How long after a process handed an answer on its client's cut may come and still cross the answer on the wire: on
 * loopback the answer is in the client's kernel well within it, and a client that closes then resets (which the
 * process sees and keeps the answer for).
 */
const CROSSING_MS = 2
/**
 * When each process handed an answer on (by marker) whose client then closed the connection cleanly without sending
 * another byte: reported by the process (test/support/redis-gateway.mjs), to the microsecond.
 */
const handedOnThenClosed = (marker: string) =>
  everyProcess.flatMap((p) => p.events.flatMap((e) => (e.handedOn?.marker === marker ? [e.handedOn.at] : [])))
/**
 * A lost answer whose client gave up just as a process handed it on: its close crossed the answer on the wire, so
 * the client's kernel had nothing to reset and the process saw the clean close of a client that had read it, which
 * no server can tell apart (docs/guides/retries-and-idempotency.md). The cut came at most `CROSSING_MS` after the
 * answer was handed on, or before it by no more than one turn of the process's loop (the longest measured, at least
 * the 10 ms its histogram resolves): a close that came earlier is seen before the answer is written.
 */
const crossed = (o: Outcome) => {
  const turn = Math.max(peaks.loopMs, 10) + CROSSING_MS
  return handedOnThenClosed(o.marker).some((at) => o.cutsAt.some((cut) => cut >= at - turn && cut <= at + CROSSING_MS))
}
const missing = () => lostAnswers().filter((o) => !touchedKilled(o) && !records.has(o.marker) && !crossed(o))
const paidReportedFailed = () =>
  outcomes.filter((o) => !o.answered && !o.cut && !touchedKilled(o) && callsFor(o.marker).some((c) => c.finished))

/** Repeats of a key that failed after its first attempt was answered (a 503 while Redis is down is by design). */
const repeatsFailed = () => outcomes.filter((o) => o.repeatError !== undefined)

/** The ledger's tokens, all owners together (by the owner ids usage events carry): its cost of the day, by the price. */
async function ledgerTokens(): Promise<number> {
  const gw = (gateways[0] as { gw: GatewayProcess }).gw
  const owners = new Set(everyProcess.flatMap((p) => p.events.flatMap((e) => (e.usage ? [e.usage.owner] : []))))
  let cost = 0
  // A process that saw Redis fail answers store_unavailable until a probe, made when it is next asked (at most one a
  // second), finds it back: a restart near the end of the run leaves it so. It is asked again for a few seconds.
  for (const owner of owners) cost += (await eventually(() => gw.usage(owner).catch(() => undefined), 10_000)).cost
  return cost / 1000
}
/**
 * How long after Redis answers again a process may still take it for down: its client reconnects within 0.6 s, and
 * the ledger asks again at most once a second, only while calls come (docs/guides/limits-and-cost.md).
 */
const KNOWN_DOWN_AFTER_MS = 3000
/** An upstream call that ended while the ledger's store was down: its charge is not counted, as documented. */
const endedInOutage = ({ finishedAt: at }: UpstreamCall) =>
  at !== undefined && outages.some((w) => at >= w.from && at <= w.to + KNOWN_DOWN_AFTER_MS)
/** Tokens of the calls the upstream finished: of those whose processes all lived and that ended with Redis up, and of all. */
const upstreamTokens = (all: boolean) =>
  outcomes
    .filter((o) => all || !touchedKilled(o))
    .flatMap((o) => callsFor(o.marker))
    .filter((c) => c.finished && (all || !endedInOutage(c)))
    .reduce((sum, c) => sum + c.tokens, 0)
/**
 * The most a cut call may be charged beyond what its upstream said: a call cut before its usage keeps the reservation
 * its admission made when that is larger (its input reckoned at 4 bytes a token, a soak prompt under 2 KB, plus its
 * `max_tokens`, 256 at most here; docs/guides/limits-and-cost.md).
 */
const RESERVATION_BOUND = 512 + 256
/** What the cut calls' reservations may add to the ledger, at most. */
const reservedForCuts = () => outcomes.filter((o) => o.cut).length * RESERVATION_BOUND
/** Tokens of the finished calls that ended while Redis was down (counted apart: their charge may be lost). */
const outageTokens = () => upstream.filter((c) => c.finished && endedInOutage(c)).reduce((sum, c) => sum + c.tokens, 0)
let ledger = 0

function printFigures(): void {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, outcomes.filter((o) => o.kind === k).length]))
  const lines = [
    `soak figures (seed ${SEED}, ${SECONDS} s)`,
    `  calls made: ${outcomes.length} ${JSON.stringify(byKind)}; upstream calls: ${upstream.length}`,
    `  faults injected: ${faults.kills} gateway kills, ${faults.redisRestarts} Redis restarts, ${faults.cuts} client cuts`,
    `  answered: ${outcomes.filter((o) => o.answered).length}; failed: ${outcomes.filter((o) => !o.answered && !o.cut).length}`,
    `  lost answers: ${lostAnswers().length}, found in recoveries: ${lostAnswers().filter((o) => records.has(o.marker)).length}, crossed on the wire: ${lostAnswers().filter((o) => !records.has(o.marker) && crossed(o)).length}, missing: ${missing().length}`,
    `  double upstream calls: keyed ${doubles(['keyed']).length}, retried ${doubles(['retried']).length}, other ${doubles(['whole', 'stream', 'anthropic', 'gemini', 'background']).length}; apart (process killed): ${doublesApart().length}, apart (SDK retry run open while Redis was down): ${retriesOpenInOutage().length}`,
    `  processes killed (s into the run): ${[...killedAt].map(([i, at]) => `#${i} at ${((at - startedAt) / 1000).toFixed(1)}`).join(', ')}`,
    `  Redis outages (s into the run): ${outages.map((w) => `${((w.from - startedAt) / 1000).toFixed(1)}-${((w.to - startedAt) / 1000).toFixed(1)}`).join(', ')}`,
    `  paid responses reported failed: ${paidReportedFailed().length}`,
    `  repeats of an answered key that failed: ${repeatsFailed().length} (${repeatsFailed().filter(duringOutage).length} while Redis was down)`,
    `  ledger tokens: ${ledger}; upstream tokens of completed calls: ${upstreamTokens(false)} (${upstreamTokens(true)} with killed processes' calls and calls that ended while Redis was down, ${outageTokens()} of them ended so; cut calls' reservations may add up to ${reservedForCuts()})`,
    `  cross-owner reads: ${crossOwnerReads} of ${records.size} records`,
    `  peak RSS of a live process: ${(peaks.rss / 1048576).toFixed(0)} MiB; longest loop delay: ${peaks.loopMs.toFixed(0)} ms`,
    `  unhandled rejections: ${everyProcess.filter((gw) => gw.events.some((e) => e.unhandled)).length}`,
  ]
  const at = (o: Outcome) => ({ ...o, startedAt: (o.startedAt - startedAt) / 1000, endedAt: ((o.endedAt ?? 0) - startedAt) / 1000 })
  const shown = new Set([...missing(), ...paidReportedFailed(), ...doubles(['keyed', 'retried']), ...repeatsFailed()])
  for (const o of [...shown].slice(0, 20)) {
    lines.push(`  e.g. ${JSON.stringify(at(o))}${duringOutage(o) ? ' (Redis down meanwhile)' : ''}`)
  }
  // What the processes of a missing answer logged around it (warnings and errors): where its record went.
  for (const o of missing().slice(0, 3)) {
    for (const instance of new Set(o.instances)) {
      const near = (everyProcess[instance - 1]?.events ?? []).filter(
        (e) => e.log !== 'info' && e.at !== undefined && e.at >= o.startedAt - 1000 && e.at <= (o.endedAt ?? o.startedAt) + 40_000,
      )
      for (const e of near.slice(0, 12)) {
        lines.push(
          `    #${instance} at ${((e.at! - startedAt) / 1000).toFixed(3)} ${e.log}: ${e.message} ${JSON.stringify(e.meta ?? {}).slice(0, 200)}`,
        )
      }
    }
  }
  console.log(lines.join('\n'))
}

it('makes calls and injects every kind of fault', () => {
  expect(outcomes.length).toBeGreaterThan(0)
  expect(faults.kills + faults.redisRestarts).toBeGreaterThan(0)
})

it('costs at most one upstream call for every repeated key and SDK retry (a killed process, and an SDK retry while Redis was down, counted apart)', () => {
  expect(doubles(['keyed']).map((o) => o.marker)).toEqual([])
  expect(doubles(['retried']).map((o) => o.marker)).toEqual([])
})

it("keeps every answer a client lost in its owner's recoveries (one its client's close crossed on the wire counted apart)", () => {
  expect(missing().map((o) => o.marker)).toEqual([])
})

it('reports no paid response as failed', () => {
  expect(paidReportedFailed().map((o) => `${o.marker}: ${o.error}`)).toEqual([])
  // The repeat of an answered key is replayed: only a store outage (503) or a killed process excuses its failure.
  const excused = (o: Outcome) => duringOutage(o) || touchedKilled(o)
  expect(
    repeatsFailed()
      .filter((o) => !excused(o))
      .map((o) => `${o.marker}: ${o.repeatError}`),
  ).toEqual([])
})

it("lets no owner read another's records", () => {
  expect(crossOwnerReads).toBe(0)
})

it("charges the ledger the upstream's usage for completed calls (a killed process's calls, and calls that ended while Redis was down, may be charged or not)", () => {
  expect(ledger).toBeGreaterThanOrEqual(upstreamTokens(false))
  expect(ledger).toBeLessThanOrEqual(upstreamTokens(true) + reservedForCuts())
})

it(`keeps every surviving process within ${MEMORY_BOUND / 1048576} MiB and its loop stalls under ${STALL_BOUND_MS} ms`, () => {
  expect(peaks.rss).toBeLessThan(MEMORY_BOUND)
  expect(peaks.loopMs).toBeLessThan(STALL_BOUND_MS)
})

it('sees no unhandled rejection in any process', () => {
  expect(everyProcess.flatMap((gw) => gw.events.flatMap((e) => (e.unhandled ? [e.unhandled] : [])))).toEqual([])
})
