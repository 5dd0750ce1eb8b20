// Part 17: what a background response costs. A Responses call created with `background: true` (its create answers
// with the id before the upstream is asked anything: one store write), read to its end by id
// (`GET /v1/responses/{id}?stream=true`), against the same call made plainly, on one gateway with the memory store,
// in interleaved rounds. p50 at c=1 of the create alone, and of create + read to the end.
import { Client } from 'undici'
import { startChild } from '../lib/proc.mjs'
import { num, section, table } from '../lib/report.mjs'
import { median, ms, percentile } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const BODY = JSON.stringify({ model: 'gpt-4o-mini', input: 'Hello from the bench' })
const BACKGROUND_BODY = JSON.stringify({ model: 'gpt-4o-mini', input: 'Hello from the bench', background: true })

/** Times `count` sequential calls of one kind on one connection: the create's and the whole call's p50. */
async function p50Of(target, count, kind) {
  const client = new Client(target.origin, { keepAliveTimeout: 30_000, pipelining: 1 })
  const created = []
  const whole = []
  const { headers } = target
  try {
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint()
      const res = await client.request({ path: '/v1/responses', method: 'POST', headers, body: kind === 'plain' ? BODY : BACKGROUND_BODY })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`)
      created.push(ms(process.hrtime.bigint() - start))
      if (kind === 'background') {
        const { id } = JSON.parse(text)
        const events = await client.request({ path: `/v1/responses/${id}?stream=true`, method: 'GET', headers })
        const stream = await events.body.text()
        if (!stream.includes('response.completed')) throw new Error(`background ${id} did not complete: ${stream.slice(-200)}`)
      }
      whole.push(ms(process.hrtime.bigint() - start))
    }
  } finally {
    await client.close()
  }
  return { created: percentile(created, 50), whole: percentile(whole, 50) }
}

export async function backgroundPart(ctx) {
  const { cfg, plan, log, targetFor } = ctx
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env: ctx.serverEnv })
  if (server.ready.type !== 'ready') return { rows: undefined, text: `### 17. Background responses\n\nSkipped: ${server.ready.reason}\n` }
  const got = { plain: { created: [], whole: [] }, background: { created: [], whole: [] } }
  try {
    const target = targetFor('gw-node', server.ready.port)
    const count = Math.max(50, Math.floor(cfg.latencyCount / 4))
    for (const kind of ['plain', 'background']) await p50Of(target, Math.max(20, Math.floor(cfg.latencyWarmup / 4)), kind)
    for (let r = 0; r < cfg.rounds; r++) {
      for (const kind of r % 2 === 0 ? ['plain', 'background'] : ['background', 'plain']) {
        const p50 = await p50Of(target, count, kind)
        got[kind].created.push(p50.created)
        got[kind].whole.push(p50.whole)
      }
    }
  } finally {
    await server.stop()
  }
  log('background: done')
  const plain = median(got.plain.whole)
  const created = median(got.background.created)
  const whole = median(got.background.whole)
  const rows = { plain, created, whole, added: whole - plain }
  const text = section(
    '17. Background responses: create-to-id latency, and a whole background call against a plain one (memory store, c=1)',
    [
      'A background create answers once its first state is stored, before the upstream is asked. The whole background call is that create plus `GET /v1/responses/{id}?stream=true` read to its `response.completed`; the plain call is the same `POST /v1/responses` without `background` (the mock answers at once, so the figures are the gateway’s own cost).',
    ],
    table(
      ['call', 'p50 ms c=1', '− plain ms'],
      [
        ['plain (whole answer)', num(plain, 3), ''],
        ['background: create to id', num(created, 3), num(created - plain, 3)],
        ['background: create + stream to the end', num(whole, 3), num(whole - plain, 3)],
      ],
    ),
  )
  return { rows, text }
}
