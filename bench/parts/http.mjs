// Parts 1–3: added latency at concurrency 1, saturated throughput, and SSE relay, each in
// interleaved rounds (the contestant order rotates every round) against the same mock upstream.
import { Client, Pool } from 'undici'
import { SMALL_BODY, STREAM_BODY } from '../lib/bodies.mjs'
import { latencySamples, loadGenerator, readStream, saturate } from '../lib/load.mjs'
import { cpuSecondsOf, memoryOf, resetPeak } from '../lib/proc.mjs'
import { num, ratio, section, spread, table } from '../lib/report.mjs'
import { median, percentile, summary } from '../lib/stats.mjs'

/** Round r visits the contestants starting at a different one, so no one always follows the same neighbour. */
function rotation(list, round) {
  const k = round % list.length
  return [...list.slice(k), ...list.slice(0, k)]
}

/** Part 1: per-round p50/p99 at c=1, and the difference to direct measured in the same round. */
export async function latencyPart(ctx) {
  const { contestants, cfg, log } = ctx
  log(`latency: warm-up ${cfg.latencyWarmup} requests each`)
  for (const c of contestants) await latencySamples(c.target, SMALL_BODY, cfg.latencyWarmup)
  const perRound = contestants.map(() => ({ p50: [], p99: [] }))
  for (let r = 0; r < cfg.rounds; r++) {
    const got = new Map()
    for (const c of rotation(contestants, r)) {
      const samples = await latencySamples(c.target, SMALL_BODY, cfg.latencyCount)
      got.set(c.id, { p50: percentile(samples, 50), p99: percentile(samples, 99) })
    }
    contestants.forEach((c, i) => {
      perRound[i].p50.push(got.get(c.id).p50)
      perRound[i].p99.push(got.get(c.id).p99)
    })
    log(`latency: round ${r + 1}/${cfg.rounds} done`)
  }
  const direct = perRound[contestants.findIndex((c) => c.id === 'direct')]
  const rows = contestants.map((c, i) => {
    const added50 = perRound[i].p50.map((v, r) => v - direct.p50[r])
    const added99 = perRound[i].p99.map((v, r) => v - direct.p99[r])
    return {
      id: c.id,
      label: c.label,
      p50: summary(perRound[i].p50),
      p99: summary(perRound[i].p99),
      added50: summary(added50),
      added99: summary(added99),
    }
  })
  const byId = Object.fromEntries(rows.map((row) => [row.id, row]))
  const portkey = byId.portkey?.added50.median
  const text = section(
    `1. Added latency at concurrency 1 (ms; median of ${cfg.rounds} round(s), min–max across rounds)`,
    [
      `${cfg.latencyCount} sequential requests per contestant per round on one keep-alive connection; added = contestant − direct in the same round.`,
    ],
    table(
      ['contestant', 'p50', 'p99', 'added p50', 'added p99', 'added p50 ÷ Portkey’s'],
      rows.map((row) => [
        row.label,
        spread(row.p50, 3),
        spread(row.p99, 3),
        row.id === 'direct' ? '—' : spread(row.added50, 3),
        row.id === 'direct' ? '—' : spread(row.added99, 3),
        row.id === 'direct' || row.id === 'portkey' || !portkey ? '—' : ratio(row.added50.median / portkey),
      ]),
    ),
  )
  return { rows: byId, text }
}

/** Part 2: successful requests per second at c=32, and how busy each side's core was. */
export async function throughputPart(ctx) {
  const { contestants, cfg, log, loadPids } = ctx
  const list = contestants
  log(`throughput: warm-up ${cfg.throughputWarmupS}s each (${loadGenerator})`)
  for (const c of list) await saturate(c.target, SMALL_BODY, cfg.connections, cfg.throughputWarmupS)
  const perRound = list.map(() => ({ rps: [], p99: [], serverCpu: [], loadCpu: [], failed: 0 }))
  for (let r = 0; r < cfg.rounds; r++) {
    for (const c of rotation(list, r)) {
      const i = list.indexOf(c)
      const cpu0 = c.pid ? cpuSecondsOf(c.pid) : Number.NaN
      const load0 = loadPids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0)
      const started = process.hrtime.bigint()
      const result = await saturate(c.target, SMALL_BODY, cfg.connections, cfg.throughputS)
      const wall = Number(process.hrtime.bigint() - started) / 1e9
      perRound[i].rps.push(result.rps)
      perRound[i].p99.push(result.p99)
      perRound[i].failed += result.failed
      perRound[i].serverCpu.push(c.pid ? ((cpuSecondsOf(c.pid) - cpu0) / wall) * 100 : Number.NaN)
      perRound[i].loadCpu.push(((loadPids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0) - load0) / wall) * 100)
    }
    log(`throughput: round ${r + 1}/${cfg.rounds} done`)
  }
  const rows = Object.fromEntries(
    list.map((c, i) => [
      c.id,
      {
        label: c.label,
        rps: summary(perRound[i].rps),
        p99: summary(perRound[i].p99),
        serverCpu: median(perRound[i].serverCpu),
        loadCpu: median(perRound[i].loadCpu),
        failed: perRound[i].failed,
        perRound: perRound[i].rps,
      },
    ]),
  )
  // Ratios per round (same round, neighbouring runs), then the median of those.
  const roundRatio = (a, b) => (rows[a] && rows[b] ? summary(rows[a].perRound.map((v, r) => v / rows[b].perRound[r])) : undefined)
  const ratios = {
    nodeVsFloor: roundRatio('gw-node', 'floor-node'),
    nodeVsPortkey: roundRatio('gw-node', 'portkey'),
    expressVsBare: roundRatio('gw-express', 'floor-express'),
    expressVsNodeHandler: roundRatio('gw-express', 'floor-express-node'),
    expressVsHpm: roundRatio('gw-express', 'hpm-express'),
    koaVsBare: roundRatio('gw-koa', 'floor-koa'),
  }
  const text = section(
    `2. Saturated throughput at concurrency ${cfg.connections} (req/s; median of ${cfg.rounds} round(s) of ${cfg.throughputS}s, min–max)`,
    [
      `Load generator: ${loadGenerator}. CPU % is the median over rounds of the server process and of the load side (mock + load generator), 100 % = one core.`,
      'Bare Express + undici answers through Express’s response path (`res.status().type().send()`: its headers, ETag and length), as bare Koa answers through `ctx.body`; the gateway’s adapters write to the response themselves. `Express + the floor’s node:http handler` is the floor’s own handler mounted in Express, without that path.',
    ],
    table(
      ['contestant', 'req/s', 'p99 ms', 'server CPU %', 'load-side CPU %', 'failed'],
      list.map((c) => {
        const row = rows[c.id]
        return [row.label, spread(row.rps, 0), spread(row.p99, 1), num(row.serverCpu, 0), num(row.loadCpu, 0), String(row.failed)]
      }),
    ) +
      '\n\n' +
      table(
        ['ratio (per round, then median)', 'value'],
        [
          ['node adapter ÷ floor', spread(ratios.nodeVsFloor)],
          ['node adapter ÷ Portkey', spread(ratios.nodeVsPortkey)],
          ['Express adapter ÷ bare Express + undici', spread(ratios.expressVsBare)],
          ['Express adapter ÷ Express + the floor’s node:http handler', spread(ratios.expressVsNodeHandler)],
          ['Express adapter ÷ http-proxy-middleware', spread(ratios.expressVsHpm)],
          ['Koa adapter ÷ bare Koa + undici', spread(ratios.koaVsBare)],
        ],
      ),
  )
  return { rows, ratios, text }
}

/** Part 3a: one stream of 64 deltas at a time; TTFT and inter-frame gaps against direct. */
export async function ssePart(ctx) {
  const { contestants, cfg, log, mock } = ctx
  const clients = new Map(contestants.map((c) => [c.id, new Client(c.target.origin, { keepAliveTimeout: 30_000 })]))
  const perRound = contestants.map(() => ({ ttft: [], gap99: [], gap50: [], frames: new Set(), coalesced: 0, total: 0, incomplete: 0 }))
  try {
    // Warmed up on unpaced streams, so that what a stream's start costs is measured in steady state: the earlier
    // parts warmed whole calls only, and a few streams leave a contestant's per-stream code unoptimised (the more
    // code it has there, the longer it stays so), which once doubled a gateway's added TTFT.
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: 0 } })
    for (const c of contestants) for (let s = 0; s < cfg.sseWarmup; s++) await readStream(clients.get(c.id), c.target, STREAM_BODY)
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.sseFrameGapMs } })
    for (const c of contestants) await readStream(clients.get(c.id), c.target, STREAM_BODY)
    for (let r = 0; r < cfg.sseRounds; r++) {
      for (const c of rotation(contestants, r)) {
        const i = contestants.indexOf(c)
        const ttfts = []
        const gaps = []
        for (let s = 0; s < cfg.sseStreams; s++) {
          const got = await readStream(clients.get(c.id), c.target, STREAM_BODY)
          ttfts.push(got.ttft)
          gaps.push(...got.gaps)
          perRound[i].frames.add(got.frames)
          perRound[i].coalesced += got.coalesced
          perRound[i].total += got.frames
          if (!got.done) perRound[i].incomplete++
        }
        perRound[i].ttft.push(median(ttfts))
        perRound[i].gap99.push(percentile(gaps, 99))
        perRound[i].gap50.push(percentile(gaps, 50))
      }
      log(`sse: round ${r + 1}/${cfg.sseRounds} done`)
    }
  } finally {
    await Promise.all([...clients.values()].map((client) => client.close()))
    await mock.request({ type: 'defaults', mock: null })
  }
  const direct = perRound[contestants.findIndex((c) => c.id === 'direct')]
  const rows = Object.fromEntries(
    contestants.map((c, i) => {
      const p = perRound[i]
      return [
        c.id,
        {
          label: c.label,
          ttft: summary(p.ttft),
          addedTtft: summary(p.ttft.map((v, r) => v - direct.ttft[r])),
          gap99: summary(p.gap99),
          gap50: summary(p.gap50),
          addedGap99: summary(p.gap99.map((v, r) => v - direct.gap99[r])),
          frames: [...p.frames].join('/'),
          coalescedPct: (p.coalesced / Math.max(1, p.total)) * 100,
          incomplete: p.incomplete,
        },
      ]
    }),
  )
  const text = section(
    `3. SSE relay: 64 deltas, one frame every ${cfg.sseFrameGapMs} ms (ms; median of ${cfg.sseRounds} round(s), min–max)`,
    [
      `${cfg.sseStreams} streams per contestant per round, after ${cfg.sseWarmup} unpaced warm-up streams each. TTFT = request sent → first data frame read. Coalesced = frames that arrived in the same read as the frame before: a relay that buffers delivers frames in bursts (median gap → 0); a busy core coalesces a few on its own.`,
    ],
    table(
      [
        'contestant',
        'TTFT',
        'added TTFT',
        'inter-frame p50',
        'inter-frame p99',
        'added inter-frame p99',
        'frames/stream',
        'coalesced %',
        'incomplete',
      ],
      contestants.map((c) => {
        const row = rows[c.id]
        const isDirect = c.id === 'direct'
        return [
          row.label,
          spread(row.ttft, 3),
          isDirect ? '—' : spread(row.addedTtft, 3),
          spread(row.gap50, 3),
          spread(row.gap99, 3),
          isDirect ? '—' : spread(row.addedGap99, 3),
          row.frames,
          num(row.coalescedPct, 1),
          String(row.incomplete),
        ]
      }),
    ),
  )
  return { rows, text }
}

/** Part 3b: how many long streams each contestant holds at once, all frames delivered. */
export async function streamsHeldPart(ctx) {
  const { contestants, cfg, log, mock } = ctx
  const n = cfg.heldStreams
  await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.heldFrameGapMs } })
  const rows = {}
  try {
    for (const c of contestants) {
      const pool = new Pool(c.target.origin, {
        connections: n,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      })
      const before = c.pid ? memoryOf(c.pid).rss : Number.NaN
      if (c.pid) resetPeak(c.pid)
      const started = process.hrtime.bigint()
      const results = await Promise.allSettled(Array.from({ length: n }, () => readStream(pool, c.target, STREAM_BODY)))
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      const peak = c.pid ? memoryOf(c.pid).hwm : Number.NaN
      await pool.close()
      const complete = results.filter((r) => r.status === 'fulfilled' && r.value.done && r.value.frames >= 67).length
      const gaps = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.gaps : []))
      const firstError = results.find((r) => r.status === 'rejected')?.reason
      rows[c.id] = {
        label: c.label,
        complete,
        seconds,
        gap99: percentile(gaps, 99),
        rssGrowth: peak - before,
        error: firstError ? String(firstError.message ?? firstError) : '',
      }
      log(`streams held: ${c.id} ${complete}/${n}`)
    }
  } finally {
    await mock.request({ type: 'defaults', mock: null })
  }
  const text = section(
    `3b. Concurrent streams held: ${n} streams of 64 deltas opened at once, one frame every ${cfg.heldFrameGapMs} ms`,
    [
      'Held = streams that delivered every frame and `[DONE]`. RSS growth = peak RSS of the server during the run − RSS before; the servers have already served the earlier parts, so it depends on how much their heaps had grown by then.',
    ],
    table(
      ['contestant', 'held', 'wall s', 'inter-frame p99 ms', 'server RSS growth MiB', 'first error'],
      contestants.map((c) => {
        const row = rows[c.id]
        return [
          row.label,
          `${row.complete}/${n}`,
          num(row.seconds, 1),
          num(row.gap99, 2),
          num(row.rssGrowth / 1048576, 1),
          row.error.slice(0, 60),
        ]
      }),
    ),
  )
  return { rows, text }
}
