// What the response cache saves and costs: the same gateway (node adapter) with the cache off, on in memory, and on
// Redis, in interleaved rounds. A hit (the same small chat body every time) is set against the same call proxied to
// the mock with the cache off: p50 at c=1 and req/s at c=32. A miss (a new body every time, so every call looks up,
// goes upstream and keeps its answer) is set against the cache off on the same bodies.
import { createClient } from '@redis/client'
import { Client } from 'undici'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { ALL, latencySamples, saturate } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, ms, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** A hit's p50 as a share of a proxied call's, and its req/s as a multiple; a miss's added p50 in ms. */
const TARGETS = { hitP50: 0.5, hitRps: 2, missMs: 0.02 }
const KINDS = ['off', 'memory', 'redis']
/** Beside them, a server that does no work per call: the ceiling of any hit on this machine and load generator. */
const CEILING = 'ceiling'

/**
 * p50 of `count` calls one after another, each with a body never sent before (`tag` keeps runs apart); with
 * `forS`, calls go on until that many seconds have passed, however many that is (a warm-up as long as the other paths').
 */
async function missP50(target, count, tag, forS = 0) {
  const client = new Client(target.origin, { keepAliveTimeout: 30_000, pipelining: 1 })
  const base = JSON.parse(SMALL_BODY)
  const samples = []
  try {
    const until = performance.now() + forS * 1000
    for (let i = 0; i < count || performance.now() < until; i++) {
      const body = JSON.stringify({ ...base, messages: [...base.messages, { role: 'user', content: `${tag}-${i}` }] })
      const start = process.hrtime.bigint()
      const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body })
      await res.body.dump({ limit: ALL })
      samples.push(ms(process.hrtime.bigint() - start))
    }
  } finally {
    await client.close()
  }
  return percentile(samples, 50)
}

/**
 * p50 of `count` raw GETs of a key that is not there, one after another on one connection with @redis/client: what a
 * miss on Redis waits for before it can go upstream (a hit makes no upstream call, so the lookup cannot run beside it).
 */
async function rawGetP50(count, namespace) {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } })
  client.on('error', () => {})
  await client.connect()
  try {
    for (let i = 0; i < 200; i++) await client.get(`${namespace}:absent:warm-${i}`)
    const samples = []
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint()
      await client.get(`${namespace}:absent:${i}`)
      samples.push(ms(process.hrtime.bigint() - start))
    }
    return percentile(samples, 50)
  } finally {
    client.destroy()
  }
}

async function measure(ctx, targets, direct, namespace) {
  const { cfg } = ctx
  const got = { direct: [], ceiling: [], rawGet: [], ...Object.fromEntries(KINDS.map((kind) => [kind, { p50: [], rps: [], miss: [] }])) }
  await saturate(targets[CEILING], SMALL_BODY, 32, cfg.throughputWarmupS)
  for (const kind of KINDS) {
    await latencySamples(targets[kind], SMALL_BODY, cfg.latencyWarmup)
    await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputWarmupS)
    // As long as the hit path's warm-up (its latency samples and a saturating run): a miss path warmed by a few dozen
    // calls is timed before the JIT has compiled its own code (the key's hash, the capture, the store write).
    await missP50(targets[kind], cfg.latencyWarmup, `warm-${kind}`, cfg.throughputWarmupS)
  }
  for (let r = 0; r < cfg.rounds; r++) {
    const order = r % 2 === 0 ? KINDS : [...KINDS].reverse()
    got.direct.push(percentile(await latencySamples(direct, SMALL_BODY, cfg.latencyCount), 50))
    for (const kind of order) got[kind].p50.push(percentile(await latencySamples(targets[kind], SMALL_BODY, cfg.latencyCount), 50))
    for (const kind of order) got[kind].miss.push(await missP50(targets[kind], cfg.latencyCount, `r${r}-${kind}-${process.pid}`))
    got.rawGet.push(await rawGetP50(cfg.latencyCount, namespace))
    for (const kind of order) got[kind].rps.push((await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputS)).rps)
    got.ceiling.push((await saturate(targets[CEILING], SMALL_BODY, 32, cfg.throughputS)).rps)
  }
  return got
}

/** Part: the response cache off, in memory and on Redis. */
export async function cachePart(ctx) {
  const { plan, log, targetFor } = ctx
  const title = '21. Response cache: off, in memory and on Redis (node adapter, interleaved rounds)'
  const namespace = `mg-bench-cache-${process.pid}`
  const servers = {}
  try {
    for (const [kind, env] of [
      ['off', {}],
      ['memory', { BENCH_CACHE: '1' }],
      ['redis', { BENCH_CACHE: '1', BENCH_STORE: 'redis', BENCH_REDIS_URL: REDIS_URL, BENCH_NAMESPACE: namespace }],
    ]) {
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], {
        cpus: plan.server,
        env: { ...ctx.serverEnv, ...env },
      })
      if (server.ready.type !== 'ready') return { text: `### ${title}\n\nSkipped: ${server.ready.reason}\n` }
      servers[kind] = server
    }
    servers[CEILING] = await startChild(new URL('server.mjs', HERE).pathname, ['fixed-node'], { cpus: plan.server, env: ctx.serverEnv })
    const targets = Object.fromEntries([...KINDS, CEILING].map((kind) => [kind, targetFor('gw-node', servers[kind].ready.port)]))
    const got = await measure(ctx, targets, targetFor('direct', ctx.mock.ready.port), namespace)
    log('cache: done')
    const direct = median(got.direct)
    const p50 = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].p50)]))
    const rps = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].rps)]))
    const miss = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].miss)]))
    const ceiling = median(got.ceiling)
    const rawGet = median(got.rawGet)
    const proxiedAdded = p50.off - direct
    const row = (kind, label) => {
      const share = p50[kind] / p50.off
      const added = miss[kind] - miss.off
      return [
        label,
        num(p50[kind], 3),
        `${ratio(share)} ${share <= TARGETS.hitP50 ? '(target met)' : '(target missed)'}`,
        ratio(p50[kind] / proxiedAdded),
        `${num(rps[kind], 0)} (${ratio(rps[kind] / rps.off)}${rps[kind] / rps.off >= TARGETS.hitRps ? ', target met' : ', target missed'}; ${ratio(rps[kind] / ceiling)} of the ceiling)`,
        `${num(miss[kind], 3)} (${num(added, 3)} ${added <= TARGETS.missMs ? 'target met' : 'target missed'})`,
      ]
    }
    const text = section(
      title,
      [
        `A hit: the same small chat body every time, answered from the cache with no upstream call. Targets: its p50 at most ${TARGETS.hitP50}× a proxied call's (the cache off), its req/s at c=32 at least ${TARGETS.hitRps}×; a miss (a new body every call: a lookup, the upstream call, the answer kept) adds at most ${TARGETS.missMs} ms to p50 over the cache off on the same bodies.`,
        `Direct to the mock: ${num(direct, 3)} ms p50; a proxied call adds ${num(proxiedAdded, 3)} ms to it (the hit's p50 is also shown against that added time).`,
        `On Redis a miss waits for one GET before it goes upstream: a raw GET of an absent key with @redis/client takes ${num(rawGet, 3)} ms p50 here, so a Redis miss adds at least that${rawGet > TARGETS.missMs ? `, above the ${TARGETS.missMs} ms target: it is unreachable on Redis here` : ''}.`,
        `The ceiling: a node:http server on the same core that reads each request and answers the same bytes, doing no work per call, answers ${num(ceiling, 0)} req/s at c=32, ${ratio(ceiling / rps.off)} a proxied call's: no hit can pass it with this load generator on this machine, so the req/s target is reachable here only where that is above ${TARGETS.hitRps}×; a hit's req/s is also shown as a share of it.`,
      ],
      table(
        ['cache', 'hit p50 ms c=1', 'hit p50 ÷ proxied p50', 'hit p50 ÷ proxied added', 'req/s c=32 (÷ off)', 'miss p50 ms (added)'],
        [
          ['off (proxied)', num(p50.off, 3), '', '', num(rps.off, 0), num(miss.off, 3)],
          row('memory', 'in memory'),
          row('redis', 'on Redis'),
        ],
      ),
    )
    return {
      text,
      hitShare: { memory: p50.memory / p50.off, redis: p50.redis / p50.off },
      hitRps: { memory: rps.memory / rps.off, redis: rps.redis / rps.off },
      ceilingRps: ceiling / rps.off,
      missAdded: { memory: miss.memory - miss.off, redis: miss.redis - miss.off },
      rawGet,
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
}
