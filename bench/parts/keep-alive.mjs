// Part 16: what keep-alive costs a held stream. The same gateway twice, keep-alive on (a short interval, so that every
// held stream gets its comments all through the window) and off, in interleaved rounds: many streams whose upstream
// is quiet for a few seconds before it answers, and the server's CPU time and peak RSS over that window.
import { Pool } from 'undici'
import { cpuSecondsOf, memoryOf, resetPeak, startChild } from '../lib/proc.mjs'
import { num, section, table } from '../lib/report.mjs'
import { median } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const KINDS = ['on', 'off']
const KEEP_ALIVE = ': keep-alive\n\n'

/** Round r starts at another kind, so neither always runs first. */
const order = (r) => (r % 2 === 0 ? KINDS : [...KINDS].reverse())

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * One stream whose upstream stays quiet for `quietMs`, read to its end: resolves whether it ended with `[DONE]` and
 * how many keep-alive comments came.
 */
async function quietStream(pool, target, quietMs) {
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Think, then answer.' }],
    stream: true,
    mock: { delay_ms: quietMs, chunks: 4 },
  })
  const res = await pool.request({ path: target.path, method: 'POST', headers: target.headers, body })
  let text = ''
  for await (const chunk of res.body) text += chunk.toString('utf8')
  return { done: res.statusCode === 200 && text.includes('data: [DONE]'), comments: text.split(KEEP_ALIVE).length - 1 }
}

/**
 * Holds `n` quiet streams on one server and measures it over `windowMs` while all of them are held: CPU seconds
 * used, peak RSS above the RSS before the streams were opened.
 */
async function holdRound(server, target, cfg) {
  const n = cfg.keepAliveStreams
  const pid = server.child.pid
  const pool = new Pool(target.origin, { connections: n, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 })
  try {
    const rssBefore = memoryOf(pid).rss
    resetPeak(pid)
    const streams = Promise.allSettled(Array.from({ length: n }, () => quietStream(pool, target, cfg.keepAliveQuietMs)))
    // The streams are opened and reach the gateway before the window starts.
    await sleep(cfg.keepAliveSettleMs)
    const cpuBefore = cpuSecondsOf(pid)
    await sleep(cfg.keepAliveWindowMs)
    const cpu = cpuSecondsOf(pid) - cpuBefore
    const rss = memoryOf(pid).hwm - rssBefore
    const results = await streams
    const ok = results.filter((r) => r.status === 'fulfilled' && r.value.done)
    const comments = ok.reduce((sum, r) => sum + r.value.comments, 0)
    return { cpu, rss, complete: ok.length, comments }
  } finally {
    await pool.close()
  }
}

export async function keepAlivePart(ctx) {
  const { cfg, log, plan, targetFor } = ctx
  const n = cfg.keepAliveStreams
  const servers = {}
  const target = {}
  const got = Object.fromEntries(KINDS.map((k) => [k, { cpu: [], rss: [], complete: [], comments: [] }]))
  try {
    for (const kind of KINDS) {
      const env = { ...ctx.serverEnv, BENCH_KEEP_ALIVE_MS: kind === 'on' ? String(cfg.keepAliveIntervalMs) : '0' }
      servers[kind] = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env })
      if (servers[kind].ready.type !== 'ready')
        return { text: `### 16. Keep-alive on held streams\n\nSkipped: ${servers[kind].ready.reason}\n` }
      target[kind] = targetFor('gw-node', servers[kind].ready.port)
    }
    // A warm-up round each: the first one grows heaps and pools that every later round finds grown.
    for (const k of KINDS) await holdRound(servers[k], target[k], cfg)
    for (let r = 0; r < cfg.rounds; r++) {
      for (const k of order(r)) {
        const round = await holdRound(servers[k], target[k], cfg)
        for (const key of Object.keys(round)) got[k][key].push(round[key])
      }
      log(`keep-alive: round ${r + 1}/${cfg.rounds} done`)
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
  const med = Object.fromEntries(KINDS.map((k) => [k, Object.fromEntries(Object.entries(got[k]).map(([key, v]) => [key, median(v)]))]))
  const windowS = cfg.keepAliveWindowMs / 1000
  // CPU: the extra CPU time of the held streams with keep-alive on, per stream and second held.
  const cpuPerStream = (k) => (med[k].cpu / windowS / n) * 1e6
  const rssPerStream = (k) => med[k].rss / n
  const rows = KINDS.map((k) => [
    `keep-alive ${k === 'on' ? `on (${cfg.keepAliveIntervalMs} ms)` : 'off'}`,
    `${num(med[k].complete, 0)}/${n}`,
    num(med[k].comments / n, 1),
    num(med[k].cpu * 1000, 0),
    num(cpuPerStream(k), 1),
    num(rssPerStream(k) / 1024, 2),
  ])
  rows.push([
    'on − off',
    '',
    '',
    num((med.on.cpu - med.off.cpu) * 1000, 0),
    num(cpuPerStream('on') - cpuPerStream('off'), 1),
    num((rssPerStream('on') - rssPerStream('off')) / 1024, 2),
  ])
  const text = section(
    `16. Keep-alive on held streams: ${n} streams whose upstream is quiet for ${cfg.keepAliveQuietMs} ms (median of ${cfg.rounds} round(s))`,
    [
      `The same gateway twice, keep-alive on (every ${cfg.keepAliveIntervalMs} ms, so each held stream gets about ${Math.round(cfg.keepAliveWindowMs / cfg.keepAliveIntervalMs)} comments in the window) and off, in interleaved rounds. CPU = server CPU time over a ${cfg.keepAliveWindowMs} ms window while every stream is held (procfs ticks, 10 ms resolution); RSS = peak RSS during the round − RSS before it. Comments = keep-alive comments a stream got in all.`,
    ],
    table(
      ['gateway', 'complete', 'comments/stream', 'server CPU ms in window', 'CPU µs per stream per s', 'peak RSS KiB per stream'],
      rows,
    ),
  )
  return { rows: med, text }
}
