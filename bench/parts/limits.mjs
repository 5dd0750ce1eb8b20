// What per-owner limits cost: the same gateway (node adapter) without limits, with limits counted in memory, and with
// limits on Redis, in interleaved rounds; p50 at c=1 and req/s at c=32 on small chat completions (each call pays a
// check before it goes upstream and a charge when it ends). The Redis check is set against a raw EVALSHA round trip
// of the same script, sent with @redis/client from this process.
import { readFileSync } from 'node:fs'
import { createClient } from '@redis/client'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { latencySamples, saturate } from '../lib/load.mjs'
import { cpuSecondsOf, startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
/** The added p50 a check in memory may cost. */
const MEMORY_TARGET_MS = 0.02
/** Limits on Redis: req/s at least this share of limits off (DESIGN §8, wave 4). */
const REDIS_RPS_TARGET = 0.9
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** `trip`: limits off, but each call first waits for one coalesced INCR on Redis (bench/server.mjs BENCH_ROUND_TRIP). */
const KINDS = ['off', 'memory', 'redis', 'trip']

/** The ledger's script as the gateway sends it, read from its source so the baseline runs exactly the same Lua. */
function ledgerScript() {
  const source = readFileSync(new URL('../src/ledger/redis-counters.ts', HERE), 'utf8')
  const found = /LEDGER_SCRIPT = `([\s\S]*?)`/.exec(source)
  if (!found) throw new Error('LEDGER_SCRIPT not found in src/ledger/redis-counters.ts')
  return found[1]
}

/** p50 of `count` raw EVALSHA checks of one owner's hash, one after another on one connection. */
async function rawEvalsha(count, namespace) {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } })
  client.on('error', () => {})
  await client.connect()
  try {
    const sha = await client.scriptLoad(ledgerScript())
    const options = { keys: [`${namespace}:ledger:{raw}`], arguments: ['check', '0', '0', '1000000000000', '-1', '-1', '0', '0'] }
    for (let i = 0; i < 200; i++) await client.evalSha(sha, options)
    const samples = []
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint()
      await client.evalSha(sha, options)
      samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
    await client.del(options.keys)
    return percentile(samples, 50)
  } finally {
    client.destroy()
  }
}

/** The Redis server's pid, when it runs on this machine (its CPU per call is then part of what limits cost here). */
async function redisPid() {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } })
  client.on('error', () => {})
  try {
    await client.connect()
    const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1])
    return Number.isFinite(cpuSecondsOf(pid)) ? pid : undefined
  } catch {
    return undefined
  } finally {
    client.destroy()
  }
}

/** A saturating run, with the CPU microseconds per answered call its server and the Redis server spent meanwhile. */
async function saturateWithCpu(target, pids, seconds) {
  const before = pids.map((pid) => (pid === undefined ? Number.NaN : cpuSecondsOf(pid)))
  const { rps } = await saturate(target, SMALL_BODY, 32, seconds)
  const calls = rps * seconds
  const [server, redis] = pids.map((pid, i) => (pid === undefined ? Number.NaN : ((cpuSecondsOf(pid) - before[i]) * 1e6) / calls))
  return { rps, server, redis }
}

async function measure(ctx, targets, pids) {
  const { cfg } = ctx
  const got = Object.fromEntries(KINDS.map((kind) => [kind, { p50: [], rps: [], serverCpu: [], redisCpu: [] }]))
  for (const kind of KINDS) {
    await latencySamples(targets[kind], SMALL_BODY, cfg.latencyWarmup)
    await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputWarmupS)
  }
  for (let r = 0; r < cfg.rounds; r++) {
    const order = r % 2 === 0 ? KINDS : [...KINDS].reverse()
    for (const kind of order) got[kind].p50.push(percentile(await latencySamples(targets[kind], SMALL_BODY, cfg.latencyCount), 50))
    for (const kind of order) {
      const run = await saturateWithCpu(targets[kind], pids[kind], cfg.throughputS)
      got[kind].rps.push(run.rps)
      got[kind].serverCpu.push(run.server)
      got[kind].redisCpu.push(run.redis)
    }
  }
  return got
}

/** Part: per-owner limits off, in memory and on Redis. */
export async function limitsPart(ctx) {
  const { plan, log, targetFor } = ctx
  const namespace = `mg-bench-limits-${process.pid}`
  const servers = {}
  try {
    for (const [kind, env] of [
      ['off', {}],
      ['memory', { BENCH_LIMITS: '1' }],
      ['redis', { BENCH_LIMITS: '1', BENCH_STORE: 'redis', BENCH_REDIS_URL: REDIS_URL, BENCH_NAMESPACE: namespace }],
      ['trip', { BENCH_ROUND_TRIP: '1', BENCH_REDIS_URL: REDIS_URL, BENCH_NAMESPACE: namespace }],
    ]) {
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], {
        cpus: plan.server,
        env: { ...ctx.serverEnv, ...env },
      })
      if (server.ready.type !== 'ready') return { text: `### 16. Per-owner limits\n\nSkipped: ${server.ready.reason}\n` }
      servers[kind] = server
    }
    let raw
    try {
      raw = await rawEvalsha(ctx.cfg.latencyCount, namespace)
    } catch (error) {
      return { text: `### 16. Per-owner limits\n\nSkipped: Redis not reachable at ${REDIS_URL} (${error?.message ?? error})\n` }
    }
    const redis = await redisPid()
    const pids = Object.fromEntries(KINDS.map((kind) => [kind, [servers[kind].child.pid, redis]]))
    const got = await measure(ctx, Object.fromEntries(KINDS.map((kind) => [kind, targetFor('gw-node', servers[kind].ready.port)])), pids)
    log('limits: done')
    const p50 = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].p50)]))
    const rps = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].rps)]))
    const serverCpu = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].serverCpu)]))
    const redisCpu = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].redisCpu)]))
    const cpu = (kind) => `${num(serverCpu[kind], 1)} / ${num(redisCpu[kind], 1)}`
    const addedMemory = p50.memory - p50.off
    const addedRedis = p50.redis - p50.off
    const text = section(
      '16. Per-owner limits: limits.owners off, counted in memory, and on Redis (node adapter, interleaved rounds)',
      [
        'Every call pays a check before it goes upstream and a charge of its tokens and cost when it ends; the limits are set so that none is reached.',
        `Target: a check in memory adds at most ${MEMORY_TARGET_MS} ms to p50. On Redis a check is one round trip (one EVALSHA of the ledger's script); its added p50 is set against that round trip sent raw with @redis/client (${num(raw, 3)} ms p50 here).`,
        `CPU µs per call: the gateway's process, and the Redis server's (every kind's, as Redis runs on this machine and shares its cores; the off and in-memory kinds send it nothing), over the saturating runs. Where Redis shares the gateway's cores, the req/s ratio on Redis can be at most about the gateway's CPU per call off ÷ (its CPU per call on Redis + Redis's): ${ratio(serverCpu.off / (serverCpu.redis + redisCpu.redis - redisCpu.off))} here.`,
        `The floor of any limit exact across processes: limits off, but each call first waits for one INCR on Redis, sent raw with @redis/client and coalesced as the ledger coalesces one owner's checks (one in flight, the calls that come meanwhile share the next): one atomic read-modify-write on the shared store per round of calls (at c=32 in real time, one INCR served about eleven calls here), and no logic around it. The req/s target (limits on Redis ≥ ${REDIS_RPS_TARGET}× off) is within reach here only where this floor is above it.`,
      ],
      table(
        ['limits', 'p50 ms c=1', 'added p50 ms', 'req/s c=32', 'req/s ÷ off', 'CPU µs per call: gateway / Redis'],
        [
          ['off', num(p50.off, 3), '', num(rps.off, 0), '', cpu('off')],
          [
            'in memory',
            num(p50.memory, 3),
            `${num(addedMemory, 3)} ${addedMemory <= MEMORY_TARGET_MS ? '(target met)' : '(target missed)'}`,
            num(rps.memory, 0),
            ratio(rps.memory / rps.off),
            cpu('memory'),
          ],
          [
            'on Redis',
            num(p50.redis, 3),
            `${num(addedRedis, 3)} (raw EVALSHA ${num(raw, 3)}; ${ratio(addedRedis / raw)})`,
            num(rps.redis, 0),
            ratio(rps.redis / rps.off),
            cpu('redis'),
          ],
          [
            'off + one INCR (floor)',
            num(p50.trip, 3),
            num(p50.trip - p50.off, 3),
            num(rps.trip, 0),
            ratio(rps.trip / rps.off),
            cpu('trip'),
          ],
        ],
      ),
    )
    return {
      text,
      addedMemory,
      addedRedis,
      raw,
      kept: { memory: rps.memory / rps.off, redis: rps.redis / rps.off, floor: rps.trip / rps.off },
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
}
