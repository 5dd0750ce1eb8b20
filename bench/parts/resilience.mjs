// Part 11: what upstream resilience costs. The same gateway configured plainly, with a two-key pool and a fallback
// model (all healthy: the interceptors' cost when nothing fails), and with the model's upstream refusing
// connections (every call fails over to its fallback: the added latency of a failover; then to a fallback of the
// other format, where translation adds its own cost), in interleaved rounds.

import { SMALL_BODY } from '../lib/bodies.mjs'
import { freePort } from '../lib/free-port.mjs'
import { latencySamples, saturate } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const SETUPS = [
  { id: 'plain', label: 'one key, no fallback', env: {} },
  { id: 'pool', label: 'two-key pool + fallback, healthy', env: { BENCH_RESILIENCE: 'pool' } },
  { id: 'dead', label: 'upstream refuses connections: failover to the fallback', env: { BENCH_RESILIENCE: 'dead' } },
  { id: 'cross', label: 'upstream refuses connections: failover to a Gemini fallback (translated)', env: { BENCH_RESILIENCE: 'cross' } },
]

export async function resiliencePart(ctx) {
  const { cfg, plan, log, targetFor } = ctx
  const deadPort = await freePort()
  const servers = []
  try {
    for (const setup of SETUPS) {
      const env = { ...ctx.serverEnv, ...setup.env, BENCH_DEAD_PORT: String(deadPort) }
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env })
      if (server.ready.type !== 'ready')
        return { rows: undefined, text: `### 11. Upstream resilience\n\nSkipped: ${server.ready.reason}\n` }
      servers.push({ ...setup, server, target: targetFor('gw-node', server.ready.port) })
    }
    const got = Object.fromEntries(SETUPS.map((s) => [s.id, { p50: [], rps: [] }]))
    for (const s of servers) await latencySamples(s.target, SMALL_BODY, cfg.latencyWarmup)
    for (let r = 0; r < cfg.rounds; r++) {
      const order = [...servers.slice(r % servers.length), ...servers.slice(0, r % servers.length)]
      for (const s of order) got[s.id].p50.push(percentile(await latencySamples(s.target, SMALL_BODY, cfg.latencyCount), 50))
      for (const s of order) got[s.id].rps.push((await saturate(s.target, SMALL_BODY, 32, cfg.throughputS)).rps)
      log(`resilience: round ${r + 1}/${cfg.rounds} done`)
    }
    const p50 = (id) => median(got[id].p50)
    const rps = (id) => median(got[id].rps)
    const rows = SETUPS.map((s) => [
      s.label,
      num(p50(s.id), 3),
      num(p50(s.id) - p50('plain'), 3),
      num(rps(s.id), 0),
      ratio(rps(s.id) / rps('plain')),
    ])
    const text = section(
      '11. Upstream resilience: a healthy pool with a fallback, and a failover on connection refused',
      [
        'Same gateway and mock; only the configuration differs. Target: the healthy pool + fallback within the spread of the plain setup. The failover rows are what a refused connection adds before the fallback answers; the Gemini fallback row also pays for translating the request and the answer.',
      ],
      table(['setup', 'p50 ms (c=1)', 'p50 − plain ms', 'req/s (c=32)', 'req/s ÷ plain'], rows),
    )
    return { rows: got, text }
  } finally {
    for (const s of servers) await s.server.stop()
  }
}
