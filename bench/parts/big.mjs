// Parts 4 and 5: the canonical hash of 20 MB bodies, small-request latency while 20 MB bodies are in
// flight, peak RSS with 10 such bodies in flight, and the memory store after 1 000 real interrupted requests.
import http from 'node:http'
import { Client } from 'undici'
import { manyObjectsBody, SMALL_BODY, textHeavyBody } from '../lib/bodies.mjs'
import { ALL, latencySamples } from '../lib/load.mjs'
import { memoryOf, resetPeak, startChild } from '../lib/proc.mjs'
import { mib, num, ratio, section, spread, table } from '../lib/report.mjs'
import { median, percentile, summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)

const bodyCache = new Map()
/** @param {'text' | 'objects'} kind @param {number} bytes */
export function bigBody(kind, bytes) {
  const key = `${kind}:${bytes}`
  if (!bodyCache.has(key)) bodyCache.set(key, Buffer.from(kind === 'text' ? textHeavyBody(bytes) : manyObjectsBody(bytes)))
  return bodyCache.get(key)
}

/** Part 4a: requestBodyHash against JSON.parse + JSON.stringify + sha256, in a child on the server core. */
export async function hashPart(ctx) {
  const { cfg, plan, log } = ctx
  const worker = await startChild(new URL('hash.mjs', HERE).pathname, [], {
    cpus: plan.server,
    execArgv: ['--expose-gc', '--max-old-space-size=4096'],
  })
  if (worker.ready.type === 'skip') return { rows: {}, text: `### 4. Canonical hash\n\nSkipped: ${worker.ready.reason}\n` }
  const rows = {}
  try {
    for (const kind of ['text', 'objects']) {
      const { rounds, bytes } = await worker.request({ type: 'hash', body: kind, bytes: cfg.bigBytes, rounds: cfg.hashRounds })
      const pick = (key) => summary(rounds.map((r) => r[key]))
      rows[kind] = {
        bytes,
        oursText: pick('oursText'),
        floorText: pick('floorText'),
        ratioText: summary(rounds.map((r) => r.oursText / r.floorText)),
        oursValue: pick('oursValue'),
        floorValue: pick('floorValue'),
        ratioValue: summary(rounds.map((r) => r.oursValue / r.floorValue)),
      }
      log(`hash: ${kind} done`)
    }
  } finally {
    await worker.stop()
  }
  const label = { text: 'text-heavy', objects: 'many small objects' }
  const text = section(
    `4. Canonical hash of ${mib(cfg.bigBytes, 0)} bodies (ms; median of ${cfg.hashRounds} round(s), min–max)`,
    [
      'From text: `requestBodyHash(text)` vs `sha256(JSON.stringify(JSON.parse(text)))`. From the parsed value (what the capture path hashes): `requestBodyHash(value)` vs `sha256(JSON.stringify(value))`. Ratios are per round, then the median.',
    ],
    table(
      ['body', 'ours from text', 'floor from text', 'ratio', 'ours from value', 'floor from value', 'ratio'],
      Object.entries(rows).map(([kind, row]) => [
        `${label[kind]} (${mib(row.bytes)})`,
        spread(row.oursText, 0),
        spread(row.floorText, 0),
        spread(row.ratioText),
        spread(row.oursValue, 0),
        spread(row.floorValue, 0),
        spread(row.ratioValue),
      ]),
    ),
  )
  return { rows, text, bytes: cfg.bigBytes }
}

/** Keeps `parallel` 20 MB requests in flight until stopped; counts completed ones and the seconds they took. */
function bigLoad(target, body, parallel) {
  const started = process.hrtime.bigint()
  let stopped = false
  let completed = 0
  let failed = 0
  const loops = Array.from({ length: parallel }, async () => {
    const client = new Client(target.origin, { keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 })
    try {
      while (!stopped) {
        const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body })
        await res.body.dump({ limit: ALL })
        if (res.statusCode === 200) completed++
        else failed++
      }
    } finally {
      await client.close()
    }
  })
  return {
    stop: async () => {
      stopped = true
      await Promise.all(loops)
      return { completed, failed, seconds: Number(process.hrtime.bigint() - started) / 1e9 }
    },
  }
}

/** Part 4b: small-request p99 at c=1 with and without 20 MB requests in flight, per contestant and body. */
export async function stallPart(ctx) {
  const { contestants, cfg, log, mock } = ctx
  const list = contestants.filter((c) => ['gw-node', 'floor-node'].includes(c.id))
  await mock.request({ type: 'defaults', mock: null, bigDelayMs: 0 })
  const rows = []
  for (const kind of ['objects', 'text']) {
    const body = bigBody(kind, cfg.bigBytes)
    for (const c of list) {
      const quiet = []
      const loaded = []
      const quietLoop = []
      const loadedLoop = []
      let bigDone = 0
      let bigSeconds = 0
      let bigFailed = 0
      for (let r = 0; r < cfg.stallRounds; r++) {
        await c.server.request({ type: 'loop-delay-start' })
        const base = await latencySamples(c.target, SMALL_BODY, cfg.stallMaxSamples, cfg.stallWindowMs)
        quietLoop.push((await c.server.request({ type: 'loop-delay-stop' })).max)
        quiet.push(percentile(base, 99))
        const load = bigLoad(c.target, body, cfg.stallParallel)
        // Let the first big bodies reach the server before sampling.
        await new Promise((resolve) => setTimeout(resolve, 300))
        await c.server.request({ type: 'loop-delay-start' })
        const busy = await latencySamples(c.target, SMALL_BODY, cfg.stallMaxSamples, cfg.stallWindowMs)
        loadedLoop.push((await c.server.request({ type: 'loop-delay-stop' })).max)
        loaded.push(percentile(busy, 99))
        const done = await load.stop()
        bigDone += done.completed
        bigSeconds += done.seconds
        bigFailed += done.failed
      }
      rows.push({
        id: c.id,
        kind,
        label: c.label,
        quiet: summary(quiet),
        loaded: summary(loaded),
        ratio: summary(loaded.map((v, r) => v / quiet[r])),
        quietLoop: summary(quietLoop),
        loadedLoop: summary(loadedLoop),
        bigDone,
        bigPerSecond: bigDone / bigSeconds,
        bigFailed,
      })
      log(`stall: ${c.id} ${kind} done`)
    }
  }
  const label = { text: 'text-heavy', objects: 'many small objects' }
  const text = section(
    `4b. Small-request p99 while ${mib(cfg.bigBytes, 0)} requests are in flight (ms; median of ${cfg.stallRounds} round(s), min–max)`,
    [
      `${cfg.stallParallel} clients keep one ${mib(cfg.bigBytes, 0)} chat request each in flight (next sent when the last is answered); small requests at c=1 for ${cfg.stallWindowMs / 1000}s with and without them. The mock answers big bodies without parsing them. Longest loop stall = the server's own event-loop delay (max over the window), which the load core's contention does not touch. Big requests per second = those completed ÷ the seconds from the first sent to the last answered.`,
    ],
    table(
      [
        'contestant',
        'big body',
        'small p99 quiet',
        'small p99 with big bodies',
        'ratio',
        'longest loop stall quiet',
        'longest loop stall with big bodies',
        'big requests done (per second)',
      ],
      rows.map((row) => [
        row.label,
        label[row.kind],
        spread(row.quiet, 2),
        spread(row.loaded, 2),
        spread(row.ratio),
        spread(row.quietLoop, 1),
        spread(row.loadedLoop, 1),
        `${row.bigDone} (${num(row.bigPerSecond, 2)}/s)${row.bigFailed ? `, ${row.bigFailed} failed` : ''}`,
      ]),
    ),
  )
  return { rows, text, bytes: cfg.bigBytes }
}

/** Part 5a: peak RSS growth of a fresh server with 10 big requests in flight at once. */
export async function inflightMemoryPart(ctx) {
  const { cfg, plan, log, mock, targetFor } = ctx
  await mock.request({ type: 'defaults', mock: null, bigDelayMs: cfg.inflightHoldMs })
  const rows = []
  try {
    for (const kind of ['text', 'objects']) {
      const body = bigBody(kind, cfg.bigBytes)
      for (const id of ['gw-node', 'floor-node']) {
        const server = await startChild(new URL('server.mjs', HERE).pathname, [id], {
          cpus: plan.server,
          env: ctx.serverEnv,
          execArgv: ['--expose-gc'],
        })
        if (server.ready.type !== 'ready') {
          log(`memory in flight: ${id} skipped: ${server.ready.reason}`)
          continue
        }
        const pid = /** @type {number} */ (server.child.pid)
        const target = targetFor(id, server.ready.port)
        try {
          await latencySamples(target, SMALL_BODY, 200)
          await server.request({ type: 'memory', gc: true })
          const before = memoryOf(pid).rss
          resetPeak(pid)
          let sampled = before
          const timer = setInterval(() => {
            sampled = Math.max(sampled, memoryOf(pid).rss)
          }, 5)
          const clients = Array.from(
            { length: cfg.inflight },
            () => new Client(target.origin, { headersTimeout: 120_000, bodyTimeout: 120_000 }),
          )
          const statuses = await Promise.all(
            clients.map(async (client) => {
              const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body })
              await res.body.dump({ limit: ALL })
              await client.close()
              return res.statusCode
            }),
          )
          clearInterval(timer)
          const peak = Math.max(sampled, memoryOf(pid).hwm)
          const growth = peak - before
          rows.push({
            id,
            kind,
            before,
            peak,
            growth,
            perRequest: growth / cfg.inflight,
            perBody: growth / cfg.inflight / body.length,
            ok: statuses.filter((s) => s === 200).length,
          })
          log(`memory in flight: ${id} ${kind} done`)
        } finally {
          await server.stop()
        }
      }
    }
  } finally {
    await mock.request({ type: 'defaults', mock: null, bigDelayMs: 0 })
  }
  const label = {
    text: 'text-heavy',
    objects: 'many small objects',
    'gw-node': 'model-gateway node',
    'floor-node': 'floor: node:http + undici',
  }
  const text = section(
    `5. Peak RSS growth with ${cfg.inflight} ${mib(cfg.bigBytes, 0)} requests in flight at once (fresh server process each)`,
    [
      `The mock holds each big request ${cfg.inflightHoldMs} ms, so all ${cfg.inflight} are in the server together. Peak = kernel high-water mark (and 5 ms samples) after a reset.`,
    ],
    table(
      ['server', 'big body', 'RSS before', 'peak RSS', 'growth', 'growth per request', 'per request ÷ body', 'answered 200'],
      rows.map((row) => [
        label[row.id],
        label[row.kind],
        mib(row.before),
        mib(row.peak),
        mib(row.growth),
        mib(row.perRequest),
        ratio(row.perBody),
        `${row.ok}/${cfg.inflight}`,
      ]),
    ),
  )
  return { rows, text, bytes: cfg.bigBytes }
}

/** Sends a request and drops the connection `afterMs` after its body was written, before the answer. */
export function sendThenAbort(origin, path, headers, body, afterMs) {
  return new Promise((resolve) => {
    const url = new URL(path, origin)
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false })
    req.on('error', () => {})
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve(false))
    })
    req.on('close', () => resolve(true))
    req.end(body, () => setTimeout(() => req.destroy(), afterMs))
  })
}

/** Runs `total` tasks with at most `limit` at once. */
export async function pooled(total, limit, task) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, total) }, async () => {
      while (next < total) await task(next++)
    }),
  )
}

/** GETs a JSON document; resolves to { status, json, ms }. */
export async function getJson(origin, path, headers, method = 'GET') {
  const client = new Client(origin)
  try {
    const start = process.hrtime.bigint()
    const res = await client.request({ path, method, headers })
    const json = await res.body.json()
    return { status: res.statusCode, json, ms: Number(process.hrtime.bigint() - start) / 1e6 }
  } finally {
    await client.close()
  }
}

/** Part 5b: a fresh server with the default memory store after N interrupted requests of ~100 KB answers. */
export async function storeMemoryPart(ctx) {
  const { cfg, plan, log, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], {
    cpus: plan.server,
    env: ctx.serverEnv,
    execArgv: ['--expose-gc'],
  })
  if (server.ready.type !== 'ready') return { row: undefined, text: `### 5b. Memory store\n\nSkipped: ${server.ready.reason}\n` }
  const pid = /** @type {number} */ (server.child.pid)
  const target = targetFor('gw-node', server.ready.port)
  const n = cfg.storeRecords
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Write a long essay.' }],
    mock: { delay_ms: 40, content_bytes: cfg.storeRecordBytes },
  })
  let row
  try {
    await latencySamples(target, SMALL_BODY, 200)
    const before = await server.request({ type: 'memory', gc: true })
    const rssBefore = memoryOf(pid).rss
    const started = Date.now()
    await pooled(n, 16, () => sendThenAbort(target.origin, target.path, target.headers, body, 5))
    let count = 0
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      count = (await getJson(target.origin, '/v1/recoveries', target.headers)).json.count
      if (count >= n) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const fillSeconds = (Date.now() - started) / 1000
    const lists = []
    for (let i = 0; i < cfg.listRepeats; i++) lists.push((await getJson(target.origin, '/v1/recoveries', target.headers)).ms)
    const after = await server.request({ type: 'memory', gc: true })
    const rssAfter = memoryOf(pid).rss
    const payload = n * cfg.storeRecordBytes
    row = {
      n,
      count,
      fillSeconds,
      rssGrowth: rssAfter - rssBefore,
      heapGrowth: after.heapUsed + after.external - before.heapUsed - before.external,
      payload,
      list: median(lists),
    }
    log(`memory store: ${count}/${n} records`)
  } finally {
    await server.stop()
  }
  const text = section(
    `5b. Default memory store after ${n} interrupted requests with ~${Math.round(cfg.storeRecordBytes / 1024)} KB answers (fresh server)`,
    ['Records are made by real interrupted requests through the node adapter; memory is read after a full GC.'],
    table(
      ['records listed', 'fill time s', 'RSS growth', 'heap + external growth', 'growth ÷ payload (RSS)', 'list latency ms (median)'],
      [
        [
          `${row.count}/${n}`,
          num(row.fillSeconds, 1),
          mib(row.rssGrowth),
          mib(row.heapGrowth),
          ratio(row.rssGrowth / row.payload),
          num(row.list, 2),
        ],
      ],
    ),
  )
  return { row, text }
}
