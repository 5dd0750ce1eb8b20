// Part 2b: instructions per request, counted by valgrind's callgrind. On a shared or throttled machine req/s
// moves by tens of percent between rounds (a core's speed changes under the run); an instruction count barely moves
// within a run, so the ratio of two counts in one run is the steadiest view of how much more work one contestant
// does per request than another. Between runs counts move too: how many requests each event-loop turn serves, and
// so the work per request, depends on how fast the machine was. It is not a throughput: syscalls and cache misses
// cost more than their instruction counts say.
// Each contestant runs alone under callgrind, is warmed up uncounted, then counted over a fixed number of requests.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Pool } from 'undici'
import { SMALL_BODY } from '../lib/bodies.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, ratio, section, table } from '../lib/report.mjs'

const HERE = new URL('..', import.meta.url)
const TITLE = '2b. Instructions per request (callgrind), a steady view of part 2'
/** Each adapter against its own floor. */
const PAIRS = [
  ['gw-node', 'floor-node', 'node adapter ÷ floor'],
  ['gw-express', 'floor-express', 'Express adapter ÷ bare Express + undici'],
  ['gw-koa', 'floor-koa', 'Koa adapter ÷ bare Koa + undici'],
]
const CONNECTIONS = 8

function hasValgrind() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Sends `count` small chat calls over `CONNECTIONS` keep-alive connections; throws on any answer but 200. */
async function send(pool, target, count) {
  let left = count
  const worker = async () => {
    while (left-- > 0) {
      const res = await pool.request({ path: target.path, method: 'POST', headers: target.headers, body: SMALL_BODY })
      await res.body.dump()
      if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
}

/** Instructions of one contestant per request: warmed up, counters zeroed, `count` requests, counters dumped. */
async function countOne(ctx, id, warmup, count) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-callgrind-'))
  const server = await startChild(new URL('server.mjs', HERE).pathname, [id], {
    env: ctx.serverEnv,
    execPath: 'valgrind',
    // JIT code is written to the heap: callgrind must see code it already ran change.
    execArgv: ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/out`, process.execPath],
    timeoutMs: 120_000,
  })
  try {
    if (server.ready.type !== 'ready') return { error: server.ready.reason ?? 'not ready' }
    const target = ctx.targetFor(id, server.ready.port)
    const pool = new Pool(target.origin, { connections: CONNECTIONS, keepAliveTimeout: 600_000 })
    try {
      await send(pool, target, warmup)
      execFileSync('callgrind_control', ['--zero', String(server.child.pid)], { stdio: 'ignore' })
      await send(pool, target, count)
      execFileSync('callgrind_control', ['--dump', String(server.child.pid)], { stdio: 'ignore' })
    } finally {
      await pool.close()
    }
    // The dump is the one file besides the (still empty) final one; its totals line sums every thread.
    const dumps = readdirSync(dir).filter((name) => name !== 'out')
    const totals = dumps.map((name) => Number(/^totals: (\d+)/m.exec(readFileSync(path.join(dir, name), 'utf8'))?.[1]))
    const total = Math.max(...totals.filter(Number.isFinite))
    return Number.isFinite(total) ? { perRequest: total / count } : { error: 'no callgrind totals' }
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function instructionsPart(ctx) {
  const { cfg, log } = ctx
  if (!(cfg.instructionsWarmup > 0 && cfg.instructionsCount > 0)) throw new Error('instructions: no warm-up or count configured')
  if (!hasValgrind()) return { rows: {}, ratios: {}, text: `### ${TITLE}\n\nSkipped: valgrind (callgrind) is not installed.\n` }
  const ids = PAIRS.flatMap(([gw, floor]) => [floor, gw]).filter((id) => ctx.wanted.includes(id))
  const rows = {}
  for (const id of ids) {
    log(`instructions: ${id} under callgrind (${cfg.instructionsWarmup} warm-up, ${cfg.instructionsCount} counted)`)
    rows[id] = await countOne(ctx, id, cfg.instructionsWarmup, cfg.instructionsCount)
  }
  const ratios = {}
  for (const [gw, floor, label] of PAIRS) {
    if (rows[gw]?.perRequest && rows[floor]?.perRequest) ratios[gw] = { label, value: rows[gw].perRequest / rows[floor].perRequest }
  }
  const text = section(
    TITLE,
    [
      `Each contestant alone under valgrind's callgrind, ${cfg.instructionsWarmup} small chat calls uncounted, then ${cfg.instructionsCount} counted (c=${CONNECTIONS}), every thread included (the JIT's and the garbage collector's too). Within a run a count repeats within a few percent where req/s moves by tens of percent; between runs on a machine whose speed changed, counts of the same code moved by tens of percent (how many requests an event-loop turn serves changes the work per request), so only ratios within one run compare. A count is work done, not time: a syscall or a cache miss costs more than its instructions.`,
      'Instructions ÷ the floor’s is the work per request against the floor’s; where it is above 1, part 2’s req/s ratio tends to its inverse.',
    ],
    `${table(
      ['contestant', 'instructions per request'],
      ids.map((id) => [ctx.labels[id] ?? id, rows[id].error ? `failed: ${rows[id].error}` : num(rows[id].perRequest, 0)]),
    )}\n\n${table(
      ['instructions per request', 'value'],
      Object.values(ratios).map((r) => [r.label, ratio(r.value)]),
    )}`,
  )
  return { rows, ratios, text }
}
