// Part 15: what model-gateway/client costs on a clean call. The same gateway and mock, called from this process with
// Node's own fetch and with the recovering fetch wrapped around it, in interleaved rounds. Both send an
// Idempotency-Key (plain fetch a fresh one per call), so the gateway does the same work and the difference is the
// wrapper's: the key, the copy of the request, reading a whole answer before handing it over, splicing a stream.
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { SMALL_BODY, STREAM_BODY } from '../lib/bodies.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, section, spread, table } from '../lib/report.mjs'
import { ms, percentile, summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const CLIENT = new URL('../dist/client.js', HERE)
const TITLE = '15. model-gateway/client on a clean call'

/** p50 of `count` sequential calls through `fetch`, each read whole as an SDK would; `keyed`: send a fresh key. */
async function p50Of({ fetch, keyed }, url, key, body, count) {
  const samples = []
  for (let i = 0; i < count; i++) {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
    if (keyed) headers['idempotency-key'] = randomUUID()
    const start = process.hrtime.bigint()
    const res = await fetch(url, { method: 'POST', headers, body })
    await res.arrayBuffer()
    samples.push(ms(process.hrtime.bigint() - start))
    if (res.status !== 200) throw new Error(`status ${res.status}`)
  }
  return percentile(samples, 50)
}

export async function clientPart(ctx) {
  const { cfg, plan, log, mock } = ctx
  if (!existsSync(fileURLToPath(CLIENT)))
    return { rows: undefined, text: `### ${TITLE}\n\nSkipped: dist/client.js is missing (npm run build).\n` }
  const { createRecoveringFetch } = await import(pathToFileURL(fileURLToPath(CLIENT)).href)
  const server = await startChild(new URL('server.mjs', HERE).pathname, ['gw-node'], { cpus: plan.server, env: ctx.serverEnv })
  if (server.ready.type !== 'ready') return { rows: undefined, text: `### ${TITLE}\n\nSkipped: ${server.ready.reason}\n` }
  const base = `http://127.0.0.1:${server.ready.port}`
  const url = `${base}/v1/chat/completions`
  const fetches = {
    plain: { fetch: globalThis.fetch, keyed: true },
    wrapped: { fetch: createRecoveringFetch({ baseUrls: [base] }), keyed: false },
  }
  const kinds = { whole: SMALL_BODY, stream: STREAM_BODY }
  const got = { whole: { plain: [], wrapped: [] }, stream: { plain: [], wrapped: [] } }
  const key = ctx.serverEnv.BENCH_KEY
  try {
    await mock.request({ type: 'defaults', mock: { chunks: 64 } })
    for (const body of Object.values(kinds)) for (const f of Object.values(fetches)) await p50Of(f, url, key, body, cfg.latencyWarmup)
    for (let r = 0; r < cfg.rounds; r++) {
      const order = r % 2 === 0 ? ['plain', 'wrapped'] : ['wrapped', 'plain']
      for (const [kind, body] of Object.entries(kinds)) {
        for (const f of order) got[kind][f].push(await p50Of(fetches[f], url, key, body, cfg.latencyCount))
      }
      log(`client: round ${r + 1}/${cfg.rounds} done`)
    }
  } finally {
    await mock.request({ type: 'defaults', mock: null })
    await server.stop()
  }
  const rows = {}
  const lines = Object.keys(kinds).map((kind) => {
    const plain = summary(got[kind].plain)
    const wrapped = summary(got[kind].wrapped)
    const added = wrapped.median - plain.median
    const width = Math.max(plain.max - plain.min, wrapped.max - wrapped.min)
    rows[kind] = { plain, wrapped, added, width, withinSpread: added <= width }
    const label = kind === 'whole' ? 'whole answer (chat completion)' : 'stream of 64 deltas, read to its end'
    return [label, spread(plain, 3), spread(wrapped, 3), num(added, 3), num(width, 3)]
  })
  const text = section(
    TITLE,
    [
      'p50 ms of sequential calls from the bench process to one gateway (node adapter, memory store), median of the rounds with their range. Both send an Idempotency-Key. Target: the wrapper within the spread (the widest range of round p50s).',
    ],
    table(['call', 'plain fetch p50 ms', 'recovering fetch p50 ms', 'added ms', 'spread ms'], lines),
  )
  return { rows, text }
}
