// Part 21: Bedrock-format clients. What an InvokeModel call adds through the gateway to an Anthropic upstream (its
// body turned into Messages, the answer passed back) against what the Messages passthrough adds, each over its twin
// sent straight to the mock, interleaved call by call; and the event-stream writer's cost: the inter-frame gaps a
// client sees on an InvokeModelWithResponseStream stream against those of the same Messages stream as SSE (p99), and
// the writer's own time per event in the process. In-process: gateway, mock and load share one event loop.
import http from 'node:http'
import { Pool } from 'undici'
import { loadDist, loadSource, timedPost } from '../lib/dist.mjs'
import { num, section, table } from '../lib/report.mjs'
import { percentile } from '../lib/stats.mjs'

const KEY = 'sk-bench-bedrock-clients'
const PROMPT = 'Summarise the plot of a long novel in one line. '.repeat(20)

/** The gaps in ms between the chunks of one streamed answer, as its client reads them. */
async function gaps(pool, options) {
  const res = await pool.request({ method: 'POST', ...options })
  if (res.statusCode !== 200) throw new Error(`bench stream answered ${res.statusCode}`)
  const out = []
  let last
  for await (const _chunk of res.body) {
    const now = process.hrtime.bigint()
    if (last !== undefined) out.push(Number(now - last) / 1e6)
    last = now
  }
  return out
}

/** µs per event the writer takes, each event a typical content delta, p50 and p99 over `events`. */
function writerMicros(framing, events) {
  const event = Buffer.from(
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there, "}}\n\n',
  )
  const writer = framing.writer()
  for (let i = 0; i < 5000; i++) writer.write(event)
  const times = []
  for (let i = 0; i < events; i++) {
    const started = process.hrtime.bigint()
    writer.write(event)
    times.push(Number(process.hrtime.bigint() - started) / 1000)
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) }
}

/** @param {{ cfg: { quick?: boolean }, log: (line: string) => void }} ctx */
export async function bedrockClientsPart(ctx) {
  const [{ createGateway }, { nodeHandler }, { startMockUpstream }, { invokeFraming }] = await Promise.all([
    loadDist('index.js'),
    loadDist('node.js'),
    loadDist('testing.js'),
    // The InvokeModel framing, which no entry exports.
    loadSource('bench-invoke-framing.mjs', { invokeFraming: 'src/dialects/bedrock/invoke.ts' }),
  ])
  const mock = await startMockUpstream({ record: false })
  const gateway = createGateway({
    upstreams: { claude: { type: 'anthropic', baseUrl: mock.url, apiKey: 'anthropic-bench-key' } },
    models: [
      { id: 'claude-direct', upstream: 'claude', upstreamModel: 'claude-sonnet-4-5', aliases: ['us.anthropic.claude-sonnet-4-5-v1:0'] },
    ],
    auth: { apiKeys: [KEY] },
    logger: { warn() {}, error() {} },
  })
  const server = http.createServer(nodeHandler(gateway))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const viaGateway = new Pool(`http://127.0.0.1:${server.address().port}`, { connections: 1 })
  const direct = new Pool(mock.url, { connections: 1 })
  try {
    const messages = [{ role: 'user', content: PROMPT }]
    const client = { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }
    const invoke = JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['interleaved-thinking-2025-05-14'],
      max_tokens: 64,
      messages,
    })
    const kinds = {
      invoke: { path: `/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-v1:0')}/invoke`, headers: client, body: invoke },
      messages: { path: '/v1/messages', headers: client, body: JSON.stringify({ model: 'claude-direct', max_tokens: 64, messages }) },
      direct: {
        path: '/v1/messages',
        headers: { ...client, 'x-api-key': 'anthropic-bench-key' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages }),
      },
    }
    const times = { invoke: [], messages: [], direct: [] }
    const n = ctx.cfg?.quick ? 300 : 1500
    for (let i = 0; i < n + 100; i++) {
      for (const [kind, options] of Object.entries(kinds)) {
        const ms = await timedPost(kind === 'direct' ? direct : viaGateway, options)
        if (i >= 100) times[kind].push(ms)
      }
    }
    const p50 = (kind) => percentile(times[kind], 50)
    const invokeAdded = p50('invoke') - p50('direct')
    const messagesAdded = p50('messages') - p50('direct')
    // Streams: 64 deltas 1 ms apart, the same upstream stream framed two ways.
    const mockControls = { chunks: 64, chunk_delay_ms: 1 }
    const streams = {
      eventStream: {
        path: '/model/claude-direct/invoke-with-response-stream',
        headers: client,
        body: JSON.stringify({ max_tokens: 64, messages, mock: mockControls }),
      },
      sse: {
        path: '/v1/messages',
        headers: client,
        body: JSON.stringify({ model: 'claude-direct', stream: true, max_tokens: 64, messages, mock: mockControls }),
      },
    }
    const streamGaps = { eventStream: [], sse: [] }
    const rounds = ctx.cfg?.quick ? 20 : 60
    for (let i = 0; i < rounds + 3; i++) {
      for (const [kind, options] of Object.entries(streams)) {
        const found = await gaps(viaGateway, options)
        if (i >= 3) streamGaps[kind].push(...found)
      }
    }
    const gapP99 = (kind) => percentile(streamGaps[kind], 99)
    const gapDiff = gapP99('eventStream') - gapP99('sse')
    const writer = writerMicros(invokeFraming, ctx.cfg?.quick ? 20_000 : 100_000)
    const rows = [
      ['Bedrock-format client → Anthropic: added p50 (gateway − direct)', `${num(invokeAdded * 1000, 0)} µs`, '', ''],
      ['Messages passthrough: added p50 (gateway − direct)', `${num(messagesAdded * 1000, 0)} µs`, '', ''],
      [
        'InvokeModel added ÷ Messages added',
        num(invokeAdded / messagesAdded),
        '≤ 1.3',
        invokeAdded / messagesAdded <= 1.3 ? 'met' : 'missed',
      ],
      ['inter-frame p99: event stream', `${num(gapP99('eventStream'), 3)} ms`, '', ''],
      ['inter-frame p99: SSE', `${num(gapP99('sse'), 3)} ms`, '', ''],
      ['event stream − SSE, inter-frame p99', `${num(gapDiff, 3)} ms`, '≤ +0.1 ms', gapDiff <= 0.1 ? 'met' : 'missed'],
      ['event-stream writer per event (p50 / p99)', `${num(writer.p50, 2)} / ${num(writer.p99, 2)} µs`, '', ''],
    ]
    const text = section(
      'Bedrock-format clients',
      [`${n} interleaved whole calls per kind after 100 warm-up; ${rounds} streams of 64 deltas 1 ms apart per framing; in one process.`],
      table(['row', 'figure', 'target', 'verdict'], rows),
    )
    return { text, invokeAdded, messagesAdded, gapDiff, writer }
  } finally {
    await viaGateway.close()
    await direct.close()
    await new Promise((resolve) => server.close(resolve))
    await gateway.close()
    await mock.close()
  }
}
