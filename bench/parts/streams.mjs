// Part 14: what a resumable stream costs. The same gateway twice, one with `recovery.streams: 'finish'` (every
// stream numbered and kept in memory while it runs) and one plain, in interleaved rounds: TTFT and inter-frame p99
// of a 64-delta stream, memory per held stream, and the time from a cut to the first resumed event.
import http from 'node:http'
import { Client, Pool } from 'undici'
import { STREAM_BODY } from '../lib/bodies.mjs'
import { readStream } from '../lib/load.mjs'
import { memoryOf, resetPeak, startChild } from '../lib/proc.mjs'
import { num, section, spread, table, verdictTable } from '../lib/report.mjs'
import { median, percentile, summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const KINDS = ['plain', 'resumable']

/** Round r starts at another kind, so neither always runs first. */
const order = (r) => (r % 2 === 0 ? KINDS : [...KINDS].reverse())

/**
 * Starts a stream, reads `events` data events, cuts the connection, and asks `resumeAt` (by default the same
 * gateway) to resume after them: resolves the ms from the cut to the resume's head and to its first event.
 * @param {{ origin: string, path: string, headers: Record<string, string> }} target @param {number} events
 */
function cutAndResume(target, events, resumeAt = target) {
  return new Promise((resolve, reject) => {
    const url = new URL(target.path, target.origin)
    const req = http.request(url, { method: 'POST', headers: target.headers, agent: false })
    req.on('error', () => {})
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        text += chunk
        if ((text.match(/\ndata: /g) ?? []).length < events) return
        res.removeAllListeners('data')
        req.destroy()
        const cutAt = process.hrtime.bigint()
        const id = String(res.headers['x-request-id'])
        const resume = http.request(new URL(`/v1/recoveries/${id}/stream`, resumeAt.origin), {
          headers: { authorization: target.headers.authorization, 'last-event-id': String(events) },
          agent: false,
        })
        resume.on('error', reject)
        resume.on('response', (again) => {
          const head = Number(process.hrtime.bigint() - cutAt) / 1e6
          again.once('data', () => {
            resolve({ head, event: Number(process.hrtime.bigint() - cutAt) / 1e6 })
            again.destroy()
          })
        })
        resume.end()
      })
    })
    req.end(STREAM_BODY)
  })
}

/**
 * The same cut, resumed on a second gateway process sharing a Redis store: the rest comes from the first one's
 * journal. Resolves the timings, or why it could not run (no Redis).
 * @param {any} ctx @param {number} cuts
 */
async function resumeElsewhere(ctx, cuts) {
  const env = { ...ctx.serverEnv, BENCH_STREAMS: 'finish', BENCH_STORE: 'redis', BENCH_NAMESPACE: `mg-bench-streams-${process.pid}` }
  const pair = []
  try {
    for (let i = 0; i < 2; i++) {
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: ctx.plan.server, env })
      pair.push(server)
      if (server.ready.type !== 'ready') return `skipped: ${server.ready.reason}`
    }
    const [a, b] = pair.map((server) => ctx.targetFor('gw-node', server.ready.port))
    const out = []
    for (let i = 0; i < cuts; i++) out.push(await cutAndResume(a, 3, b))
    // The cut streams were kept as records in Redis: the run leaves nothing behind.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    await fetch(new URL('/v1/recoveries?all=true', b.origin), { method: 'DELETE', headers: { authorization: b.headers.authorization } })
    return out
  } catch (error) {
    return `not run: ${String(error?.message ?? error).split('\n')[0]}`
  } finally {
    for (const server of pair) await server.stop()
  }
}

export async function streamsPart(ctx) {
  const { cfg, log, mock, plan, targetFor } = ctx
  const servers = {}
  for (const kind of KINDS) {
    const env = { ...ctx.serverEnv, ...(kind === 'resumable' ? { BENCH_STREAMS: 'finish' } : {}) }
    servers[kind] = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env })
    if (servers[kind].ready.type !== 'ready') return { text: `### 14. Resumable streams\n\nSkipped: ${servers[kind].ready.reason}\n` }
  }
  const target = Object.fromEntries(KINDS.map((k) => [k, targetFor('gw-node', servers[k].ready.port)]))
  const got = Object.fromEntries(KINDS.map((k) => [k, { ttft: [], gap99: [], frames: new Set(), heldBytes: Number.NaN, held: 0 }]))
  const resumeMs = []
  /** @type {Array<{ head: number, event: number }> | string} */
  let elsewhereMs = 'not run'
  try {
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.sseFrameGapMs } })
    const clients = Object.fromEntries(KINDS.map((k) => [k, new Client(target[k].origin, { keepAliveTimeout: 30_000 })]))
    try {
      for (const k of KINDS) await readStream(clients[k], target[k], STREAM_BODY)
      for (let r = 0; r < cfg.sseRounds; r++) {
        const gaps = { plain: [], resumable: [] }
        const ttfts = { plain: [], resumable: [] }
        for (let s = 0; s < cfg.sseStreams; s++) {
          for (const k of order(r + s)) {
            const stream = await readStream(clients[k], target[k], STREAM_BODY)
            if (!stream.done) throw new Error(`a ${k} stream ended without [DONE]`)
            gaps[k].push(...stream.gaps)
            ttfts[k].push(stream.ttft)
            got[k].frames.add(stream.frames)
          }
        }
        for (const k of KINDS) {
          got[k].gap99.push(percentile(gaps[k], 99))
          got[k].ttft.push(median(ttfts[k]))
        }
        log(`streams: round ${r + 1}/${cfg.sseRounds} done`)
      }
    } finally {
      await Promise.all(Object.values(clients).map((c) => c.close()))
    }

    // Held streams: each kind alone, its peak RSS growth per stream.
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.heldFrameGapMs } })
    for (const k of KINDS) {
      const n = cfg.heldStreams
      const pool = new Pool(target[k].origin, { connections: n, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 })
      const pid = servers[k].child.pid
      const before = memoryOf(pid).rss
      resetPeak(pid)
      const results = await Promise.allSettled(Array.from({ length: n }, () => readStream(pool, target[k], STREAM_BODY)))
      got[k].heldBytes = (memoryOf(pid).hwm - before) / n
      got[k].held = results.filter((x) => x.status === 'fulfilled' && x.value.done).length
      await pool.close()
      log(`streams: ${k} held ${got[k].held}/${n}`)
    }

    // Cut, then resume on the same gateway: the events so far come from memory, the rest live.
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: 20 } })
    for (let i = 0; i < Math.max(3, cfg.sseStreams); i++) resumeMs.push(await cutAndResume(target.resumable, 3))
    elsewhereMs = await resumeElsewhere(ctx, Math.max(3, cfg.sseStreams))
  } finally {
    await mock.request({ type: 'defaults', mock: null })
    for (const k of KINDS) await servers[k]?.stop()
  }

  const { plain, resumable } = got
  const gapDelta = summary(resumable.gap99.map((v, r) => v - plain.gap99[r]))
  const ttftDelta = summary(resumable.ttft.map((v, r) => v - plain.ttft[r]))
  const plainGapSpread = Math.max(...plain.gap99) - Math.min(...plain.gap99)
  const plainTtftSpread = Math.max(...plain.ttft) - Math.min(...plain.ttft)
  const resumeHead = summary(resumeMs.map((m) => m.head))
  const resumeEvent = summary(resumeMs.map((m) => m.event))
  const elsewhere = typeof elsewhereMs === 'string' ? undefined : elsewhereMs
  const elsewhereRows = elsewhere
    ? [
        ['cut on A → resumed stream open on B (Redis) ms', spread(summary(elsewhere.map((m) => m.head)), 2)],
        ['cut on A → first resumed event on B (Redis) ms', spread(summary(elsewhere.map((m) => m.event)), 2)],
      ]
    : [['resume on another process (Redis)', String(elsewhereMs)]]
  // One round has no spread to compare with. A resumable stream faster than plain ones is no cost: only above counts.
  const judged = cfg.sseRounds > 1
  const verdicts = [
    {
      target: "resumable − plain inter-frame p99 ≤ the plain stream's run-to-run spread",
      measured: `${num(gapDelta.median, 3)} ms (spread ${num(plainGapSpread, 3)} ms)`,
      ok: judged && Number.isFinite(gapDelta.median) ? gapDelta.median <= plainGapSpread : undefined,
    },
    {
      target: "resumable − plain TTFT ≤ the plain stream's run-to-run spread",
      measured: `${num(ttftDelta.median, 3)} ms (spread ${num(plainTtftSpread, 3)} ms)`,
      ok: judged && Number.isFinite(ttftDelta.median) ? ttftDelta.median <= plainTtftSpread : undefined,
    },
  ]
  const row = (label, g) => [
    label,
    spread(summary(g.ttft), 3),
    spread(summary(g.gap99), 3),
    [...g.frames].join('/'),
    `${g.held}/${cfg.heldStreams}`,
    num(g.heldBytes / 1024, 1),
  ]
  const text = section(
    `14. Resumable streams: recovery.streams 'finish' against plain streams (one gateway each, interleaved rounds; median of ${cfg.sseRounds} round(s), min–max)`,
    [
      `64 deltas, one every ${cfg.sseFrameGapMs} ms, ${cfg.sseStreams} of each kind per round, one of each in turn. Held: ${cfg.heldStreams} streams at once (one frame every ${cfg.heldFrameGapMs} ms), peak RSS growth ÷ streams. Resume: a stream of 64 deltas 20 ms apart cut after 3 events, then \`GET /v1/recoveries/{id}/stream\` with \`Last-Event-ID: 3\` on the same gateway (${resumeMs.length} cuts): ms from the cut to the resume's head, and to its first event (which follows the upstream's pacing). The same on two gateway processes sharing Redis: cut on A, resumed on B from A's journal (written every 100 ms once the client left, read every 100 ms).`,
    ],
    `${table(
      ['streams', 'TTFT ms', 'inter-frame p99 ms', 'frames/stream', 'held', 'KiB per held stream'],
      [row('plain (cancel)', plain), row('resumable (finish: numbered, kept in memory)', resumable)],
    )}\n\n${table(
      ['difference (per round, then median)', 'value'],
      [
        ['resumable − plain TTFT ms', spread(ttftDelta, 3)],
        ['resumable − plain inter-frame p99 ms', spread(gapDelta, 3)],
        ['cut → resumed stream open (head) ms', spread(resumeHead, 2)],
        ['cut → first resumed event ms (the next event comes 20 ms after the last)', spread(resumeEvent, 2)],
        ...elsewhereRows,
      ],
    )}\n\n${verdictTable(verdicts)}`,
  )
  return { text, gapDelta, ttftDelta, resumeHead, resumeEvent, verdicts }
}
