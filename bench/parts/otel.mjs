// What OpenTelemetry costs: the same gateway (node adapter, memory store) with `model-gateway/otel` reporting to
// a real SDK whose exporters drop everything, against one without it, in interleaved rounds. p50 at c=1 and req/s
// at c=32 on small chat completions.
import { SMALL_BODY } from '../lib/bodies.mjs'
import { latencySamples, saturate } from '../lib/load.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
/** The throughput the instrumented gateway must keep, as a share of the plain one's. */
const TARGET = 0.85

async function measure(ctx, targets) {
  const { cfg } = ctx
  const got = { off: { p50: [], rps: [] }, on: { p50: [], rps: [] } }
  for (const kind of ['off', 'on']) {
    await latencySamples(targets[kind], SMALL_BODY, cfg.latencyWarmup)
    await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputWarmupS)
  }
  for (let r = 0; r < cfg.rounds; r++) {
    const order = r % 2 === 0 ? ['off', 'on'] : ['on', 'off']
    for (const kind of order) got[kind].p50.push(percentile(await latencySamples(targets[kind], SMALL_BODY, cfg.latencyCount), 50))
    for (const kind of order) got[kind].rps.push((await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputS)).rps)
  }
  return got
}

/** Part: OpenTelemetry on against off. */
export async function otelPart(ctx) {
  const { plan, log, targetFor } = ctx
  const servers = {}
  try {
    for (const [kind, env] of [
      ['off', {}],
      ['on', { BENCH_OTEL: '1' }],
    ]) {
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], {
        cpus: plan.server,
        env: { ...ctx.serverEnv, ...env },
      })
      if (server.ready.type !== 'ready') return { text: `### 11. OpenTelemetry\n\nSkipped: ${server.ready.reason}\n` }
      servers[kind] = server
    }
    const got = await measure(ctx, { off: targetFor('gw-node', servers.off.ready.port), on: targetFor('gw-node', servers.on.ready.port) })
    log('otel: done')
    const p50 = { off: median(got.off.p50), on: median(got.on.p50) }
    const rps = { off: median(got.off.rps), on: median(got.on.rps) }
    const kept = rps.on / rps.off
    const text = section(
      '11. OpenTelemetry: model-gateway/otel on (SDK, exporters that drop everything) against off (same adapter, interleaved rounds)',
      [
        `Each call makes a SERVER and a CLIENT span, a traceparent header upstream and four histogram records. Target: req/s on ≥ ${TARGET}× off (at most 15 % throughput cost).`,
      ],
      table(
        ['otel', 'p50 ms c=1', 'req/s c=32'],
        [
          ['off', num(p50.off, 3), num(rps.off, 0)],
          ['on', num(p50.on, 3), num(rps.on, 0)],
          ['on − off / on ÷ off', num(p50.on - p50.off, 3), `${ratio(kept)} ${kept >= TARGET ? '(target met)' : '(target missed)'}`],
        ],
      ),
    )
    return { rows: got, kept, text }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
}
