// Part 10: what repeat protection costs. Requests carrying an `Idempotency-Key` (a new key each, so every one
// goes upstream: the claim before, the kept answer after), and first attempts of an OpenAI SDK (which send
// `x-stainless-retry-count: 0`: fingerprinted, registered for their retries, their answer kept in memory), against
// plain requests to the same gateway, with the memory store and with Redis, in interleaved rounds. Added p50 at c=1
// and req/s at c=32.
import { randomUUID } from 'node:crypto'
import { Client } from 'undici'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { ALL, saturate } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, ms, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)

/** The kinds of request compared, in the table's order. */
const KINDS = ['plain', 'sdk', 'keyed']

/**
 * A fresh header value per request for every kind, so the load generator does the same work for each: a new
 * Idempotency-Key for keyed requests, an inert header for the others; an SDK's first attempt also says so.
 */
function headersOf(kind, headers) {
  if (kind === 'keyed') return { ...headers, 'idempotency-key': randomUUID() }
  const fresh = { ...headers, 'x-bench-request': randomUUID() }
  if (kind === 'sdk') fresh['x-stainless-retry-count'] = '0'
  return fresh
}

/** p50 of `count` sequential requests on one connection, each with its own header value. */
async function p50Of(target, count, kind) {
  const client = new Client(target.origin, { keepAliveTimeout: 30_000, pipelining: 1 })
  const samples = []
  try {
    for (let i = 0; i < count; i++) {
      const headers = headersOf(kind, target.headers)
      const start = process.hrtime.bigint()
      const res = await client.request({ path: target.path, method: 'POST', headers, body: SMALL_BODY })
      await res.body.dump({ limit: ALL })
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`)
      samples.push(ms(process.hrtime.bigint() - start))
    }
  } finally {
    await client.close()
  }
  return percentile(samples, 50)
}

/** req/s at c=32, each request with its own header value (autocannon's per-request setup). */
function rpsOf(target, durationS, kind) {
  return saturate(target, SMALL_BODY, 32, durationS, (req) => ({ ...req, headers: headersOf(kind, req.headers) }))
}

async function measure(ctx, target) {
  const { cfg } = ctx
  const got = Object.fromEntries(KINDS.map((kind) => [kind, { p50: [], rps: [] }]))
  for (const kind of KINDS) await p50Of(target, cfg.latencyWarmup, kind)
  for (let r = 0; r < cfg.rounds; r++) {
    const order = r % 2 === 0 ? KINDS : [...KINDS].reverse()
    for (const kind of order) got[kind].p50.push(await p50Of(target, cfg.latencyCount, kind))
    for (const kind of order) got[kind].rps.push((await rpsOf(target, cfg.throughputS, kind)).rps)
  }
  return got
}

export async function repeatsPart(ctx) {
  const { plan, log, targetFor } = ctx
  const runNs = `mg-bench-repeats-${process.pid}-${Date.now().toString(36)}`
  const rows = {}
  for (const store of ['memory', 'redis']) {
    const env = { ...ctx.serverEnv, BENCH_STORE: store, BENCH_NAMESPACE: runNs }
    const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env })
    if (server.ready.type !== 'ready') return { rows: undefined, text: `### 10. Repeat protection\n\nSkipped: ${server.ready.reason}\n` }
    try {
      rows[store] = await measure(ctx, targetFor('gw-node', server.ready.port))
    } catch (error) {
      rows[store] = { error: String(error?.message ?? error) }
    } finally {
      await server.stop()
    }
    log(`repeats: ${store} store done`)
  }
  await removeKeys(runNs).catch((error) => log(`repeats: clean-up failed: ${error}`))
  const LABELS = { plain: 'plain', sdk: 'SDK first attempt', keyed: 'Idempotency-Key' }
  const lines = (store) => {
    const row = rows[store]
    if (!row || row.error) return [[store, '', `failed: ${row?.error ?? 'not run'}`, '', '', '']]
    const p50 = Object.fromEntries(KINDS.map((kind) => [kind, median(row[kind].p50)]))
    const rps = Object.fromEntries(KINDS.map((kind) => [kind, median(row[kind].rps)]))
    return KINDS.map((kind) => [
      store,
      LABELS[kind],
      num(p50[kind], 3),
      kind === 'plain' ? '' : num(p50[kind] - p50.plain, 3),
      num(rps[kind], 0),
      kind === 'plain' ? '' : ratio(rps[kind] / rps.plain),
    ])
  }
  const memory = rows.memory && !rows.memory.error ? median(rows.memory.keyed.p50) - median(rows.memory.plain.p50) : undefined
  const text = section(
    '10. Repeat protection: requests with an Idempotency-Key, and first attempts of an OpenAI SDK, against plain requests (same gateway, interleaved rounds)',
    [
      'Each keyed request carries a new key, so each goes upstream: one store claim before (SET NX on Redis) and one kept answer after. Plain requests carry neither header and touch no store. Target: keyed p50 ≤ plain + 0.1 ms with the memory store; one Redis round trip at the start and one at the end (counted by test/e2e/idempotency-cost.test.ts).',
      'An SDK first attempt carries `x-stainless-retry-count: 0`, as every call of the OpenAI SDKs does: it touches no store, but its body is hashed (the fingerprint its retries are matched by), it is registered as running while it runs, and its delivered answer is kept in memory for `idempotency.recentMs`. This is what plain traffic from the OpenAI SDKs costs.',
    ],
    table(['store', 'requests', 'p50 ms c=1', '− plain ms', 'req/s c=32', '÷ plain req/s'], [...lines('memory'), ...lines('redis')]),
  )
  return { rows, memoryAddedP50: memory, text }
}

/** The keys this part wrote to the shared Redis (24 h kept answers), removed at once. */
async function removeKeys(namespace) {
  const { createClient } = await import('@keyv/redis')
  const client = createClient({ url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' })
  client.on('error', () => {})
  await client.connect()
  try {
    const keys = []
    for await (const batch of client.scanIterator({ MATCH: `*${namespace}*`, COUNT: 1000 })) keys.push(...batch)
    if (keys.length > 0) await client.unlink(keys)
  } finally {
    client.destroy()
  }
}
