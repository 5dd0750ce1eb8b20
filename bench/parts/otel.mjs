// What OpenTelemetry costs: the same gateway (node adapter, memory store) with `model-gateway/otel` reporting to
// a real SDK whose exporters drop everything, against one without it, in interleaved rounds. p50 at c=1 and req/s
// at c=32 on small chat completions.
import { execFileSync } from 'node:child_process'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { latencySamples, saturate } from '../lib/load.mjs'
import { cpuSecondsOf, startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
/** The throughput the instrumented gateway must keep, as a share of the plain one's. */
const TARGET = 0.85

const KINDS = ['off', 'api', 'on', 'als', 'sampled']

/** req/s at c=32, and the server's CPU µs per request meanwhile: steadier than req/s on a machine others load. */
async function rpsAndCpu(target, pid, durationS) {
  const cpu0 = cpuSecondsOf(pid)
  const { rps } = await saturate(target, SMALL_BODY, 32, durationS)
  return { rps, cpuUs: ((cpuSecondsOf(pid) - cpu0) / (rps * durationS)) * 1e6 }
}

async function measure(ctx, targets, pids) {
  const { cfg } = ctx
  const got = Object.fromEntries(KINDS.map((kind) => [kind, { p50: [], rps: [], cpuUs: [] }]))
  for (const kind of KINDS) {
    await latencySamples(targets[kind], SMALL_BODY, cfg.latencyWarmup)
    await saturate(targets[kind], SMALL_BODY, 32, cfg.throughputWarmupS)
  }
  for (let r = 0; r < cfg.rounds; r++) {
    const order = r % 2 === 0 ? KINDS : [...KINDS].reverse()
    for (const kind of order) got[kind].p50.push(percentile(await latencySamples(targets[kind], SMALL_BODY, cfg.latencyCount), 50))
    for (const kind of order) {
      const { rps, cpuUs } = await rpsAndCpu(targets[kind], pids[kind], cfg.throughputS)
      got[kind].rps.push(rps)
      got[kind].cpuUs.push(cpuUs)
    }
  }
  return got
}

/**
 * The SDK's own CPU µs per call, measured alone (bench/otel-sdk.mjs) on the servers' core: the median of three runs
 * of its metrics and of its spans.
 */
function sdkAlone(plan) {
  const script = new URL('otel-sdk.mjs', HERE).pathname
  const runs = []
  for (let k = 0; k < 3; k++) {
    const [command, args] = plan.pinned ? ['taskset', ['-c', plan.server, process.execPath, script]] : [process.execPath, [script]]
    runs.push(JSON.parse(execFileSync(command, args, { encoding: 'utf8' })))
  }
  return { metrics: median(runs.map((r) => r.metrics)), spans: median(runs.map((r) => r.spans)) }
}

/** Part: OpenTelemetry on against off. */
export async function otelPart(ctx) {
  const { plan, log, targetFor } = ctx
  const servers = {}
  try {
    for (const [kind, env] of [
      ['off', {}],
      ['api', { BENCH_OTEL: 'api' }],
      ['on', { BENCH_OTEL: '1' }],
      ['als', { BENCH_OTEL: 'als' }],
      ['sampled', { BENCH_OTEL: 'sampled' }],
    ]) {
      // Under --profile each setup's CPU profile is named after it, so a run's profiles can be told apart.
      const profiled = ctx.execArgv.length > 0 ? [...ctx.execArgv, `--cpu-prof-name=otel-${kind}.cpuprofile`] : []
      const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], {
        cpus: plan.server,
        env: { ...ctx.serverEnv, ...env },
        execArgv: profiled,
      })
      if (server.ready.type !== 'ready') return { text: `### 13. OpenTelemetry\n\nSkipped: ${server.ready.reason}\n` }
      servers[kind] = server
    }
    const got = await measure(
      ctx,
      Object.fromEntries(KINDS.map((kind) => [kind, targetFor('gw-node', servers[kind].ready.port)])),
      Object.fromEntries(KINDS.map((kind) => [kind, servers[kind].child.pid])),
    )
    const sdk = sdkAlone(plan)
    log('otel: done')
    const p50 = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].p50)]))
    const rps = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].rps)]))
    const cpu = Object.fromEntries(KINDS.map((kind) => [kind, median(got[kind].cpuUs)]))
    const kept = rps.on / rps.off
    const sdkUs = sdk.metrics + sdk.spans
    /** One setup's row: its p50 and req/s against off, and its CPU per request. */
    const line = (label, id, rpsCell = ratio(rps[id] / rps.off)) => [
      label,
      num(p50[id], 3),
      num(p50[id] - p50.off, 3),
      num(rps[id], 0),
      rpsCell,
      num(cpu[id], 0),
      ratio(cpu[id] / cpu.off),
    ]
    const text = section(
      '13. OpenTelemetry: model-gateway/otel on (SDK, exporters that drop everything) against off (same adapter, interleaved rounds)',
      [
        `Each call makes a SERVER and a CLIENT span, a traceparent header upstream and four histogram records. Target: req/s on ≥ ${TARGET}× off (at most 15 % throughput cost).`,
        'Server CPU µs per request (user + system, from procfs, during the c=32 runs) is the steadier measure on a machine shared with other work: its ratio is what the throughput cost tends to.',
        '`instrumented, no SDK`: `instrumentGateway` with only `@opentelemetry/api` loaded (its no-ops): the gateway’s own share (channels, messages, the subscriber).',
        '`on, 1 trace in 10`: spans recorded for a tenth of the traces (parent-based ratio sampler), metrics for every call.',
        '`on + ALS`: the same with the SDK’s AsyncLocalStorage context manager installed (as `NodeSDK` does); the gateway does not need it.',
        `The SDK’s own work per call, measured alone (\`bench/otel-sdk.mjs\`: the four histogram records and the two spans of one call, nothing else; CPU, garbage collection included): ${num(sdkUs, 1)} µs (metrics ${num(sdk.metrics, 1)}, spans ${num(sdk.spans, 1)}). Were the subscriber free, \`on\` would still use off + that per request: at best ${ratio(cpu.off / (cpu.off + sdkUs))} of off’s req/s at equal CPU.`,
      ],
      table(
        ['otel', 'p50 ms c=1', 'added p50 ms', 'req/s c=32', 'req/s ÷ off', 'server CPU µs/request', 'CPU ÷ off'],
        [
          ['off', num(p50.off, 3), '', num(rps.off, 0), '', num(cpu.off, 0), ''],
          line('instrumented, no SDK', 'api'),
          line('on', 'on', `${ratio(kept)} ${kept >= TARGET ? '(target met)' : '(target missed)'}`),
          line('on + ALS', 'als'),
          line('on, 1 trace in 10', 'sampled'),
        ],
      ),
    )
    return { rows: got, kept, sdk, text }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
}
