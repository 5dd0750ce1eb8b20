// Part 17b: what a big background request costs in memory and in event-loop stalls (issue 39's amplification). One
// Responses call with large instructions, made plainly and with `background: true`, each on a fresh gateway process
// (memory store): the peak RSS growth from the request until the create is answered (for the plain call, until its
// answer is read), and until the background call was read to its end by id; the longest event-loop stall throughout.
// DESIGN §8: a request in flight costs at most 3× its size.
import { Client } from 'undici'
import { memoryOf, resetPeak, startChild } from '../lib/proc.mjs'
import { mib, num, ratio, section, table } from '../lib/report.mjs'
import { median, ms } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
/** The most a request in flight may hold, in multiples of its size (DESIGN §8). */
const TARGET = 3
const SENTENCE = 'Answer as a careful assistant would, briefly and without repeating the question back. '

/** A Responses request whose instructions make it `bytes` long. */
function bigRequest(bytes, background) {
  const instructions = SENTENCE.repeat(Math.ceil(bytes / SENTENCE.length)).slice(0, bytes)
  return JSON.stringify({ model: 'gpt-4o-mini', instructions, input: 'Hello from the bench', ...(background ? { background: true } : {}) })
}

/**
 * One call on a fresh server (the gateway, or for `kind` 'floor' the bare server that keeps one string of the body):
 * peak RSS growth at the create (or answer) and at the end, and the longest stall.
 */
async function measureOne(ctx, kind, body) {
  const { plan, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, [kind === 'floor' ? 'floor-keep' : 'gw-node'], {
    cpus: plan.server,
    env: ctx.serverEnv,
    execArgv: ['--expose-gc'],
  })
  if (server.ready.type !== 'ready') throw new Error(`gateway not ready: ${server.ready.reason}`)
  const pid = /** @type {number} */ (server.child.pid)
  const target = targetFor('gw-node', server.ready.port)
  const client = new Client(target.origin, { headersTimeout: 120_000, bodyTimeout: 120_000 })
  let timer
  try {
    // Warm both paths with small calls, so what is measured is the big call and not the first call's compilation.
    for (let i = 0; i < 20; i++) await call(client, target, bigRequest(1000, kind === 'background'), kind)
    await server.request({ type: 'memory', gc: true })
    const before = memoryOf(pid).rss
    resetPeak(pid)
    let sampled = before
    timer = setInterval(() => {
      sampled = Math.max(sampled, memoryOf(pid).rss)
    }, 5)
    await server.request({ type: 'loop-delay-start' })
    const start = process.hrtime.bigint()
    const { created } = await call(client, target, body, kind, () => {
      sampled = Math.max(sampled, memoryOf(pid).hwm)
      return sampled
    })
    const atEnd = Math.max(sampled, memoryOf(pid).hwm)
    const wholeMs = ms(process.hrtime.bigint() - start)
    clearInterval(timer)
    const lag = await server.request({ type: 'loop-delay-stop' })
    return { createGrowth: created - before, wholeGrowth: atEnd - before, lagMax: lag.max, wholeMs }
  } finally {
    clearInterval(timer)
    await client.close()
    await server.stop()
  }
}

/**
 * Makes one call: POST, then for a background one its events by id read to the end. `atCreate` is asked for the
 * peak once the create (or the plain answer) is read.
 */
async function call(client, target, body, kind, atCreate = () => 0) {
  const { headers } = target
  const res = await client.request({ path: '/v1/responses', method: 'POST', headers, body })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`)
  const created = atCreate()
  if (kind === 'background') {
    const { id } = JSON.parse(text)
    const events = await client.request({ path: `/v1/responses/${id}?stream=true`, method: 'GET', headers })
    // The completed event's name is near its start; the object after it may be as long as the request.
    let carry = ''
    let completed = false
    for await (const chunk of events.body) {
      const text = carry + chunk.toString('latin1')
      completed ||= text.includes('event: response.completed')
      carry = text.slice(-64)
    }
    if (!completed) throw new Error(`background ${id} did not complete`)
  }
  return { created }
}

/** Part: a big request's memory and stalls, plain and in the background. */
export async function backgroundMemoryPart(ctx) {
  const { cfg, log, mock } = ctx
  const bytes = cfg.backgroundBytes
  // The bench mock answers bodies over its threshold with a chat completion; this part needs the Responses answer.
  await mock.request({ type: 'defaults', mock: null, bigThreshold: Number.MAX_SAFE_INTEGER })
  const got = { floor: [], plain: [], background: [] }
  try {
    for (let r = 0; r < cfg.backgroundRounds; r++) {
      for (const kind of r % 2 === 0 ? ['floor', 'plain', 'background'] : ['background', 'plain', 'floor']) {
        got[kind].push(await measureOne(ctx, kind, bigRequest(bytes, kind === 'background')))
        log(`background memory: ${kind} round ${r + 1} done: ${(got[kind].at(-1).createGrowth / bytes).toFixed(2)}x`)
      }
    }
  } finally {
    await mock.request({ type: 'defaults', mock: null, bigThreshold: 1024 * 1024 })
  }
  const row = (kind) => {
    const rows = got[kind]
    const of = (field) => median(rows.map((one) => one[field]))
    return { createGrowth: of('createGrowth'), wholeGrowth: of('wholeGrowth'), lagMax: of('lagMax'), wholeMs: of('wholeMs') }
  }
  const floor = row('floor')
  const plain = row('plain')
  const background = row('background')
  const kept = background.createGrowth / bytes
  const text = section(
    `17b. A ${mib(bytes, 0)} background request: peak RSS growth and the longest event-loop stall, against the same call made plainly (fresh process each, memory store, medians of ${cfg.backgroundRounds})`,
    [
      'The floor is a bare `node:http` server that reads the same body (its chunks, then joined) and keeps one string of it, as a background create must keep the created event that echoes its request.',
      'Growth is the peak RSS (kernel high-water mark and 5 ms samples, reset before the call) above the RSS after a full GC: at the create’s answer (for the plain call, its answer read), and at the end (the background call’s events read by id to `response.completed`). The stall is the longest event-loop delay from the request to the end.',
      `Target (DESIGN §8): the create path holds at most ${TARGET}× the request.`,
    ],
    table(
      ['call', 'growth at create', '÷ request', 'growth at the end', '÷ request', 'longest stall ms', 'whole call ms'],
      [
        [
          'floor: read, one string kept',
          mib(floor.createGrowth),
          ratio(floor.createGrowth / bytes),
          '—',
          '—',
          num(floor.lagMax, 1),
          num(floor.wholeMs, 0),
        ],
        [
          'plain',
          mib(plain.createGrowth),
          ratio(plain.createGrowth / bytes),
          mib(plain.wholeGrowth),
          ratio(plain.wholeGrowth / bytes),
          num(plain.lagMax, 1),
          num(plain.wholeMs, 0),
        ],
        [
          'background',
          mib(background.createGrowth),
          `${ratio(kept)} ${kept <= TARGET ? '(target met)' : '(target missed)'}`,
          mib(background.wholeGrowth),
          ratio(background.wholeGrowth / bytes),
          num(background.lagMax, 1),
          num(background.wholeMs, 0),
        ],
      ],
    ),
  )
  return { text, kept, floorKept: floor.createGrowth / bytes, lagMax: background.lagMax, floor, plain, background }
}
