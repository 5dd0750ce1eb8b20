// Part 6: recovery records on Redis through the public HTTP flow (real interrupted requests), against
// the same commands sent directly with @redis/client. The gateway process times each write from the
// moment its upstream response body completed to the `model-gateway:record:stored` message of that record.
import { ask, startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'
import { getJson, sendThenAbort } from './big.mjs'

const HERE = new URL('..', import.meta.url)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(2)
  }
}

/** Drives one gateway process: sequential interrupted requests, then a burst released at once, then list. */
async function throughGateway(ctx, server, target, opts) {
  const { mock } = ctx
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Write a long essay.' }],
    mock: { delay_ms: 15, content_bytes: opts.responseBytes },
  })
  // Asked once and answered by the write that reaches the count: polling would land on the loop being timed.
  const recovered = (count, timeoutMs) => ask(server.child, { type: 'recovered', count }, timeoutMs)
  for (let i = 0; i < 10; i++) await sendThenAbort(target.origin, target.path, target.headers, body, 3)
  await recovered(10, 10_000)
  await server.request({ type: 'writes', reset: true })

  for (let i = 0; i < opts.sequential; i++) {
    await sendThenAbort(target.origin, target.path, target.headers, body, 3)
    await recovered(i + 1, 10_000)
  }
  const sequential = await server.request({ type: 'writes', reset: true })

  await mock.request({ type: 'hold' })
  try {
    await Promise.all(Array.from({ length: opts.burst }, () => sendThenAbort(target.origin, target.path, target.headers, body, 3)))
    await waitFor(async () => (await mock.request({ type: 'held' })).held >= opts.burst, 30_000, 'the burst to reach the mock')
  } finally {
    await mock.request({ type: 'release' })
  }
  await recovered(opts.burst, 60_000)
  const burst = await server.request({ type: 'writes', reset: true })

  const lists = []
  let listed = 0
  for (let i = 0; i < opts.listRepeats; i++) {
    const got = await getJson(target.origin, '/v1/recoveries', target.headers)
    lists.push(got.ms)
    listed = got.json.count
  }
  await getJson(target.origin, '/v1/recoveries?all=true', target.headers, 'DELETE')
  return { samples: sequential.samples, burstMs: burst.spanMs, lists, listed }
}

export async function redisPart(ctx) {
  const { cfg, plan, log, targetFor } = ctx
  const runNs = `mg-bench-${process.pid}-${Date.now().toString(36)}`
  const raw = await startChild(new URL('redis-raw.mjs', HERE).pathname, [], { cpus: plan.server })
  if (raw.ready.type !== 'ready') return { rows: undefined, text: `### 6. Redis store\n\nSkipped: ${raw.ready.reason}\n` }
  const opts = { sequential: cfg.redisSequential, burst: cfg.redisBurst, responseBytes: cfg.redisRecordBytes, listRepeats: cfg.listRepeats }
  const rows = {}
  try {
    for (const store of ['memory', 'redis']) {
      const env = { ...ctx.serverEnv, BENCH_INSTRUMENT: '1', BENCH_STORE: store, BENCH_NAMESPACE: runNs }
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env })
      if (server.ready.type !== 'ready') return { rows: undefined, text: `### 6. Redis store\n\nSkipped: ${server.ready.reason}\n` }
      try {
        rows[store] = await throughGateway(ctx, server, targetFor('gw-node', server.ready.port), opts)
      } catch (error) {
        rows[store] = { error: String(error?.message ?? error) }
      } finally {
        await server.stop()
      }
      log(`redis: gateway with ${store} store done`)
    }
    rows.raw = await raw.request({ type: 'run', ns: `${runNs}-raw`, ...opts }, 300_000)
    log('redis: raw client done')
    await raw.request({ type: 'cleanup', pattern: `*${runNs}*` })
  } finally {
    await raw.stop()
  }
  const label = { memory: 'gateway, memory store (reference)', redis: 'gateway, Redis store', raw: 'raw @redis/client, same commands' }
  const line = (key) => {
    const row = rows[key]
    if (!row || row.error) return [label[key], `failed: ${row?.error ?? 'not run'}`, '', '', '', '']
    return [
      label[key],
      num(percentile(row.samples, 50), 3),
      num(percentile(row.samples, 99), 3),
      num((opts.burst / row.burstMs) * 1000, 0),
      num(median(row.lists), 2),
      String(row.listed),
    ]
  }
  const r = rows.redis
  const w = rows.raw
  const m = rows.memory?.error ? undefined : rows.memory
  /** What the Redis store adds over the memory store, as a multiple of the raw client's time; blank without both. */
  const storeShare = (redis, memory, raw) => (Number.isFinite(memory) ? ratio((redis - memory) / raw) : '')
  const ok = r && !r.error && w
  const text = section(
    `6. Redis store (Redis ${raw.ready.version}): record write and list, against raw @redis/client`,
    [
      `Records with ~${Math.round(opts.responseBytes / 1024)} KB answers made by real interrupted requests. Write latency (c=1, ${opts.sequential} records) = upstream body complete → record stored (hash, build, serialise, one MULTI: 3 SET + HSET + 2 PEXPIRE + HLEN), timed inside the gateway to its \`record:stored\` message; raw = the same MULTI in one round trip, one write every 18 ms as the gateway's come (back to back they run several times faster). Burst = ${opts.burst} responses released at once by the mock: records/s from the first upstream body to the last stored record. List = GET /v1/recoveries over HTTP (gateway) vs HSCAN pages + one EXISTS over each page's detail keys (raw).`,
    ],
    table(
      ['path', 'write p50 ms', 'write p99 ms', 'burst records/s', 'list ms (median)', 'records listed'],
      ['memory', 'redis', 'raw'].map(line),
    ) +
      (ok
        ? '\n\n' +
          table(
            ['ratio', 'value'],
            [
              ['write p50: gateway ÷ raw', ratio(percentile(r.samples, 50) / percentile(w.samples, 50))],
              // The store's own share: what Redis adds over the same gateway on the memory store, against the raw write.
              [
                'write p50: (gateway Redis − gateway memory) ÷ raw',
                storeShare(percentile(r.samples, 50), m ? percentile(m.samples, 50) : Number.NaN, percentile(w.samples, 50)),
              ],
              ['burst records/s: gateway ÷ raw', ratio(w.burstMs / r.burstMs)],
              ['burst time per record: (gateway Redis − gateway memory) ÷ raw', storeShare(r.burstMs, m?.burstMs, w.burstMs)],
              ['list latency: gateway ÷ raw', ratio(median(r.lists) / median(w.lists))],
            ],
          )
        : ''),
  )
  return { rows, text }
}
