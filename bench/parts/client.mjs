// Part 15: what model-gateway/client costs on a clean call, and how soon it resumes a cut stream. The same gateway and
// mock, called from this process with Node's own fetch and with the recovering fetch wrapped around it, in interleaved
// rounds. Both send an Idempotency-Key (plain fetch a fresh one per call), so the gateway does the same work and the
// difference is the wrapper's: the key, the copy of the request, reading a whole answer before handing it over,
// splicing a stream. Then streams go through a proxy that cuts their connection mid-way, and the time from the cut to
// the first resumed event the app reads is measured.
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import net from 'node:net'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { SMALL_BODY, STREAM_BODY } from '../lib/bodies.mjs'
import { startChild } from '../lib/proc.mjs'
import { num, section, spread, table } from '../lib/report.mjs'
import { ms, percentile, summary } from '../lib/stats.mjs'

const HERE = new URL('..', import.meta.url)
const CLIENT = new URL('../dist/client.js', HERE)
const TITLE = '15. model-gateway/client: clean calls and cut streams'

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

/**
 * A TCP proxy to `port` that drops each connection once `cutAfter` bytes of its answer went through, and notes when
 * (a CDN or a network path giving out mid-stream).
 */
async function cuttingProxy(port, cutAfter) {
  const cuts = []
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1')
    let relayed = 0
    const drop = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', drop)
    upstream.on('error', drop)
    client.pipe(upstream)
    upstream.on('data', (chunk) => {
      if (relayed >= cutAfter) return
      const part = chunk.subarray(0, cutAfter - relayed)
      relayed += part.length
      if (relayed < cutAfter) client.write(part)
      else
        client.write(part, () => {
          cuts.push(process.hrtime.bigint())
          drop()
        })
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${server.address().port}`, cuts, close: () => new Promise((resolve) => server.close(resolve)) }
}

/**
 * One stream through `proxy` (cut mid-way) with the gateway itself as the second base URL: the ms from the cut to the
 * client's resume request, and to the first resumed event the app reads.
 */
async function cutStream(createRecoveringFetch, proxy, base, key) {
  let resumedAt
  // A fresh client per stream: one that saw the proxy fail would start the next call elsewhere.
  const fetch = createRecoveringFetch({
    baseUrls: [proxy.url, base],
    onEvent: (event) => {
      if (event.type === 'resume') resumedAt = process.hrtime.bigint()
    },
  })
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
  const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers, body: STREAM_BODY })
  const cutsBefore = proxy.cuts.length
  let firstResumed
  for await (const _ of res.body) if (resumedAt !== undefined && firstResumed === undefined) firstResumed = process.hrtime.bigint()
  const cutAt = proxy.cuts[cutsBefore] ?? proxy.cuts.at(-1)
  if (resumedAt === undefined || firstResumed === undefined || cutAt === undefined) throw new Error('the stream was not cut and resumed')
  return { detect: ms(resumedAt - cutAt), firstEvent: ms(firstResumed - cutAt) }
}

async function resumeRows(ctx, createRecoveringFetch, base) {
  const { cfg, mock } = ctx
  const proxy = await cuttingProxy(Number(new URL(base).port), 3000)
  const got = { detect: [], firstEvent: [] }
  try {
    await mock.request({ type: 'defaults', mock: { chunks: 64, chunk_delay_ms: cfg.sseFrameGapMs } })
    for (let r = 0; r < cfg.rounds; r++) {
      const samples = []
      for (let i = 0; i < cfg.resumeCuts; i++) samples.push(await cutStream(createRecoveringFetch, proxy, base, ctx.serverEnv.BENCH_KEY))
      got.detect.push(
        percentile(
          samples.map((s) => s.detect),
          50,
        ),
      )
      got.firstEvent.push(
        percentile(
          samples.map((s) => s.firstEvent),
          50,
        ),
      )
    }
  } finally {
    await mock.request({ type: 'defaults', mock: null })
    await proxy.close()
  }
  return { detect: summary(got.detect), firstEvent: summary(got.firstEvent) }
}

/** Part 15: the recovering fetch against plain fetch on clean calls, and cut streams resumed through it. */
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
  let resume
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
    await mock.request({ type: 'defaults', mock: null })
    resume = await resumeRows(ctx, createRecoveringFetch, base)
    log('client: cut streams done')
  } finally {
    await mock.request({ type: 'defaults', mock: null })
    await server.stop()
  }
  const rows = { resume }
  const lines = Object.keys(kinds).map((kind) => {
    const plain = summary(got[kind].plain)
    const wrapped = summary(got[kind].wrapped)
    const added = wrapped.median - plain.median
    const width = Math.max(plain.max - plain.min, wrapped.max - wrapped.min)
    rows[kind] = { plain, wrapped, added, width, withinSpread: added <= width }
    const label = kind === 'whole' ? 'whole answer (chat completion)' : 'stream of 64 deltas, read to its end'
    return [label, spread(plain, 3), spread(wrapped, 3), num(added, 3), num(width, 3)]
  })
  const resumeTable = table(
    ['cut stream (64 deltas, 3000 bytes through, then cut)', 'p50 ms'],
    [
      ['cut → resume request sent (the cut noticed)', spread(resume.detect, 3)],
      ['cut → first resumed event read by the app', spread(resume.firstEvent, 3)],
    ],
  )
  const text = section(
    TITLE,
    [
      'p50 ms of sequential calls from the bench process to one gateway (node adapter, memory store), median of the rounds with their range. Both send an Idempotency-Key. Target: the wrapper within the spread (the widest range of round p50s).',
    ],
    `${table(['call', 'plain fetch p50 ms', 'recovering fetch p50 ms', 'added ms', 'spread ms'], lines)}\n\n${`Streams through a TCP proxy that drops the connection after 3000 bytes of the answer (about a dozen events in), with the gateway itself as the second base URL; ${ctx.cfg.resumeCuts} cut streams per round, p50 per round, median of the rounds with their range.\n\n`}${resumeTable}`,
  )
  return { rows, text }
}
