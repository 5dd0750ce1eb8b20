// Part 4c: hostile bodies. One request at a time to a fresh gateway, each a body a client can send within
// `limits.maxRequestBytes`: a lookup nested about a million levels deep (answered 400 past `limits.maxJsonDepth`),
// one just under 1 MiB nested 990 deep (answered 200), and lookups of many small objects and of `{}` repeated
// (answered 200, hashed on a worker thread). What is measured is the gateway's
// own longest event-loop stall while it answers, against the absolute target of 100 ms, and the time to answer.
import { Client } from 'undici'
import { manyObjectsBody } from '../lib/bodies.mjs'
import { startChild } from '../lib/proc.mjs'
import { mib, num, section, spread, table } from '../lib/report.mjs'
import { summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
/** The target of DESIGN §8: any single request, any body within the limit. */
export const STALL_TARGET_MS = 100

/** A lookup body of about `bytes` whose one member nests arrays and objects as deep as fits (~1 M levels in 16 MiB). */
export function deepBody(bytes) {
  const open = '[{"nested-one-more-level-here":'
  const close = '}]'
  const head = '{"messages":'
  const pairs = Math.floor((bytes - head.length - 2) / (open.length + close.length))
  return { body: Buffer.from(`${head}${open.repeat(pairs)}0${close.repeat(pairs)}}`), levels: 2 * pairs + 1 }
}

/** Just under 1 MiB of arrays nested 990 deep, within `limits.maxJsonDepth`: answered 200, never parsed on the loop. */
export function deep990Body() {
  const chain = `${'['.repeat(989)}${']'.repeat(989)}`
  const head = '{"model":"gpt-4o-mini","messages":['
  const count = Math.floor((1024 * 1024 - head.length - 10) / (chain.length + 1))
  return Buffer.from(`${head}${Array(count).fill(chain).join(',')}]}`)
}

/** @param {'deep' | 'deep990' | 'empties' | 'wide'} kind @param {number} bytes */
function hostileBody(kind, bytes) {
  if (kind === 'deep') {
    const { body, levels } = deepBody(bytes)
    return { body, what: `lookup nested ${(levels / 1e6).toFixed(2)} M levels deep` }
  }
  if (kind === 'deep990') return { body: deep990Body(), what: 'lookup nested 990 levels deep' }
  if (kind === 'empties') {
    const body = Buffer.from(`{"model":"gpt-4o-mini","messages":[${'{},'.repeat(Math.floor(bytes / 3) - 20)}{}]}`)
    return { body, what: 'lookup of {} repeated' }
  }
  return { body: Buffer.from(manyObjectsBody(bytes)), what: 'lookup of many small objects' }
}

/** Sends one body and waits for the whole answer; the time to answer is from the first byte sent. */
async function sendOnce(target, body) {
  const client = new Client(target.origin, { headersTimeout: 600_000, bodyTimeout: 600_000 })
  try {
    const started = process.hrtime.bigint()
    const res = await client.request({ path: '/v1/recoveries/lookup', method: 'POST', headers: target.headers, body })
    await res.body.text()
    return { status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }
  } finally {
    await client.close()
  }
}

/** Part 4c: each hostile body `cfg.stallRounds` times through a fresh node-adapter gateway. */
export async function hostilePart(ctx) {
  const { cfg, plan, log, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env: ctx.serverEnv })
  if (server.ready.type !== 'ready') return { rows: [], text: `### 4c. Hostile bodies\n\nSkipped: ${server.ready.reason}\n` }
  const target = targetFor('gw-node', server.ready.port)
  const rows = []
  try {
    for (const [kind, bytes] of [
      ['deep', cfg.hostileDeepBytes],
      ['deep990', 0],
      ['wide', cfg.hostileWideBytes],
      ['empties', cfg.hostileWideBytes],
    ]) {
      const { body, what } = hostileBody(kind, bytes)
      const stalls = []
      const answers = []
      const statuses = new Set()
      for (let r = 0; r < cfg.stallRounds; r++) {
        await server.request({ type: 'loop-delay-start' })
        const { status, ms } = await sendOnce(target, body)
        stalls.push((await server.request({ type: 'loop-delay-stop' })).max)
        answers.push(ms)
        statuses.add(status)
      }
      rows.push({ kind, what, bytes: body.length, stall: summary(stalls), answer: summary(answers), statuses: [...statuses].join('/') })
      log(`hostile: ${kind} done`)
    }
  } finally {
    await server.stop()
  }
  const text = section(
    `4c. Hostile bodies: the gateway's longest event-loop stall while it answers one (ms; median of ${cfg.stallRounds} round(s), min–max)`,
    [
      `One request at a time to a fresh node-adapter gateway with its default limits (the deepest body is refused for its depth; the others are answered, hashed for lookup). Longest loop stall = the server's own event-loop delay (max over the request); target ≤ ${STALL_TARGET_MS} ms.`,
    ],
    table(
      ['body', 'status', 'longest loop stall', 'time to answer'],
      rows.map((row) => [`${row.what} (${mib(row.bytes)})`, row.statuses, spread(row.stall, 1), spread(row.answer, 0)]),
    ),
  )
  return { rows, text }
}

/** One verdict per hostile body: the longest stall within the §8 target. */
export function hostileVerdicts(result) {
  return (result?.rows ?? []).map((row) => ({
    target: `any single request: longest loop stall ≤ ${STALL_TARGET_MS} ms (${row.what}, ${mib(row.bytes, 0)})`,
    measured: `${num(row.stall.max, 1)} ms worst of ${row.stall.n} (answered ${row.statuses} in ${num(row.answer.median, 0)} ms)`,
    ok: Number.isFinite(row.stall.max) ? row.stall.max <= STALL_TARGET_MS : undefined,
  }))
}
