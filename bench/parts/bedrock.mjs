// Part 20: Bedrock upstreams. What SigV4 costs per call (the authorizer on a 1 KB body, credentials kept, so the
// signing alone; beside it `@smithy/signature-v4` used alone, the library's own cost), and what a call to Claude on Bedrock adds over the same upstream call made directly: an Anthropic
// client through the gateway (body rewritten for InvokeModel, the answer passed back) against the upstream request's
// twin sent straight to the mock's InvokeModel route, both with a Bedrock API key (so the mock does the same work for
// each), interleaved call by call; the same for an Anthropic upstream as the yardstick. A signed call adds the first
// row to the second. Then the gaps an Anthropic client's stream has between frames when its upstream is Claude on
// Bedrock (an AWS event stream, decoded by the gateway with @smithy/eventstream-codec) against an SSE upstream. In-process: gateway, mock and load share one event loop.
import http from 'node:http'
import { Readable } from 'node:stream'
import { Pool } from 'undici'
import { loadDist, loadSource, timedPost } from '../lib/dist.mjs'
import { num, section, spread, table } from '../lib/report.mjs'
import { median, percentile, summary } from '../lib/stats.mjs'

const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const KEY = 'sk-bench-bedrock'
const PROMPT = 'Summarise the plot of a long novel in one line. '.repeat(20)

/**
 * µs of the gateway's own work per frame of a Claude-on-Bedrock stream: each frame (an Anthropic delta event, as
 * Bedrock frames it) arriving as its own read, its CRCs checked, its chunk decoded and written as an SSE event. What
 * an SSE upstream's frame costs here is nothing: it is relayed as it came.
 */
async function framingMicros({ bedrockAnthropic, eventFrame }, frames) {
  const delta = (i) =>
    JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word ${i} of the answer ` } })
  const encoded = Array.from({ length: 256 }, (_, i) =>
    eventFrame({ event: 'chunk' }, JSON.stringify({ bytes: Buffer.from(delta(i)).toString('base64'), p: 'abcdefghijklmnop' })),
  )
  const once = async (count) => {
    const reader = bedrockAnthropic.upstreamFraming('messages', {})
    let i = 0
    const body = new Readable({
      read() {
        this.push(i < count ? encoded[i++ % encoded.length] : null)
      },
    })
    const started = process.hrtime.bigint()
    for await (const _event of reader(body));
    return Number(process.hrtime.bigint() - started) / count / 1000
  }
  await once(frames)
  const rounds = []
  for (let round = 0; round < 5; round++) rounds.push(await once(frames))
  return median(rounds)
}

/** µs per `authorize` of a 1 KB body, after a warm-up (the signing key and credentials are kept across calls). */
async function signingMicros(upstreamAuthorizer, credentials, calls) {
  const authorizer = upstreamAuthorizer('bench', { region: 'us-east-1', credentials })
  const body = Buffer.from(
    JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }),
  )
  const request = () => ({
    method: 'POST',
    origin: 'https://bedrock-runtime.us-east-1.amazonaws.com',
    path: `/model/${encodeURIComponent(MODEL)}/invoke`,
    headers: ['content-type', 'application/json', 'accept-encoding', 'identity'],
    body,
  })
  for (let i = 0; i < 2000; i++) await authorizer.authorize(request())
  const rounds = []
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) await authorizer.authorize(request())
    rounds.push(Number(process.hrtime.bigint() - started) / calls / 1000)
  }
  return median(rounds)
}

/**
 * µs per signing by `@smithy/signature-v4` alone, as its README uses it (static credentials, `@smithy/hash-node`,
 * the library hashing the body): the floor the authorizer is measured against.
 */
async function libraryMicros(credentials, calls) {
  const [{ SignatureV4 }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')])
  const signer = new SignatureV4({ service: 'bedrock', region: 'us-east-1', sha256: Hash.bind(null, 'sha256'), credentials })
  const body = Buffer.from(
    JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }),
  )
  const host = 'bedrock-runtime.us-east-1.amazonaws.com'
  const request = () => ({
    method: 'POST',
    protocol: 'https:',
    hostname: host,
    path: `/model/${encodeURIComponent(MODEL)}/invoke`,
    query: {},
    headers: { host, 'content-type': 'application/json' },
    body,
  })
  for (let i = 0; i < 2000; i++) await signer.sign(request())
  const rounds = []
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) await signer.sign(request())
    rounds.push(Number(process.hrtime.bigint() - started) / calls / 1000)
  }
  return median(rounds)
}

/** Frames of the streams the inter-frame rows read: 64 deltas, one every 2 ms, as the SSE relay part paces them. */
const STREAM_CHUNKS = 64
const STREAM_GAP_MS = 2

/**
 * One stream: the gaps in ms between the reads that brought bytes, after the first (what a client sees between
 * frames), and whether every delta arrived (an Anthropic event each, in SSE or in an event-stream frame).
 */
async function streamGaps(pool, request) {
  const res = await pool.request({ method: 'POST', ...request })
  if (res.statusCode !== 200) throw new Error(`bench stream answered ${res.statusCode}`)
  const gaps = []
  let last
  let reads = 0
  for await (const _chunk of res.body) {
    const now = process.hrtime.bigint()
    reads++
    if (last !== undefined) gaps.push(Number(now - last) / 1e6)
    last = now
  }
  return { gaps, whole: reads >= STREAM_CHUNKS }
}

/** @param {{ cfg: { quick?: boolean }, log: (line: string) => void }} ctx */
export async function bedrockPart(ctx) {
  const [{ createGateway }, { nodeHandler }, { startMockUpstream, MOCK_AWS_CREDENTIALS }, dialects] = await Promise.all([
    loadDist('index.js'),
    loadDist('node.js'),
    loadDist('testing.js'),
    // The gateway's SigV4 authorizer, which no entry exports: the row times the gateway's own code.
    loadSource('bench-sigv4.mjs', { sigv4Authorizer: 'src/dialects/bedrock/sigv4.ts' }),
  ])
  // Its reader of Claude-on-Bedrock streams and its event-stream frame writer: the per-frame row times its decoding.
  const framing = await loadSource('bench-bedrock-framing.mjs', {
    bedrockAnthropic: 'src/dialects/bedrock/anthropic.ts',
    eventFrame: 'src/dialects/bedrock/event-frame.ts',
  })
  const calls = ctx.cfg?.quick ? 2000 : 10_000
  const mock = await startMockUpstream({ record: false, bedrock: { apiKeys: ['bedrock-bench-key'] } })
  const gateway = createGateway({
    upstreams: {
      // A Bedrock API key, as the direct calls send: the mock then does the same work for both, and signing has its own row.
      aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', apiKey: 'bedrock-bench-key' },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: 'anthropic-bench-key' },
    },
    models: [
      { id: 'claude-bedrock', upstream: 'aws', upstreamModel: MODEL },
      { id: 'claude-direct', upstream: 'claude', upstreamModel: MODEL },
    ],
    auth: { apiKeys: [KEY] },
    logger: { warn() {}, error() {} },
  })
  const server = http.createServer(nodeHandler(gateway))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const gatewayUrl = `http://127.0.0.1:${server.address().port}`
  const viaGateway = new Pool(gatewayUrl, { connections: 1 })
  const direct = new Pool(mock.url, { connections: 1 })
  try {
    const signing = await signingMicros(dialects.sigv4Authorizer, MOCK_AWS_CREDENTIALS, calls)
    const library = await libraryMicros(MOCK_AWS_CREDENTIALS, calls)
    const messages = [{ role: 'user', content: PROMPT }]
    const client = { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }
    const kinds = {
      bedrock: { path: '/v1/messages', headers: client, body: JSON.stringify({ model: 'claude-bedrock', max_tokens: 64, messages }) },
      bedrockDirect: {
        path: `/model/${encodeURIComponent(MODEL)}/invoke`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer bedrock-bench-key' },
        body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages }),
      },
      anthropic: { path: '/v1/messages', headers: client, body: JSON.stringify({ model: 'claude-direct', max_tokens: 64, messages }) },
      anthropicDirect: {
        path: '/v1/messages',
        headers: { ...client, 'x-api-key': 'anthropic-bench-key' },
        body: JSON.stringify({ model: MODEL, max_tokens: 64, messages }),
      },
    }
    const times = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]))
    const n = ctx.cfg?.quick ? 300 : 1500
    for (let i = 0; i < n + 100; i++) {
      for (const [kind, options] of Object.entries(kinds)) {
        const ms = await timedPost(kind.endsWith('Direct') ? direct : viaGateway, options)
        if (i >= 100) times[kind].push(ms)
      }
    }
    // Streams: the same Anthropic client stream from Claude on Bedrock (an AWS event stream the gateway decodes) and
    // from the Anthropic upstream (SSE relayed), and each upstream stream read directly, interleaved stream by stream:
    // what the gateway adds to each framing's gaps, the mock's own work for each taken out.
    const streamed = { mock: { chunks: STREAM_CHUNKS, chunk_delay_ms: STREAM_GAP_MS } }
    const streamKinds = {
      eventStream: {
        pool: viaGateway,
        ...kinds.bedrock,
        body: JSON.stringify({ model: 'claude-bedrock', max_tokens: 64, messages, stream: true, ...streamed }),
      },
      eventStreamDirect: {
        pool: direct,
        ...kinds.bedrockDirect,
        path: `/model/${encodeURIComponent(MODEL)}/invoke-with-response-stream`,
        body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages, ...streamed }),
      },
      sse: {
        pool: viaGateway,
        ...kinds.anthropic,
        body: JSON.stringify({ model: 'claude-direct', max_tokens: 64, messages, stream: true, ...streamed }),
      },
      sseDirect: {
        pool: direct,
        ...kinds.anthropicDirect,
        body: JSON.stringify({ model: MODEL, max_tokens: 64, messages, stream: true, ...streamed }),
      },
    }
    // Rounds of interleaved streams: a p99 of one round moves by a millisecond on a shared machine, so the rows give
    // each round's p99 and the added figures their median and spread across rounds.
    const rounds = ctx.cfg?.quick ? 3 : 5
    const streams = ctx.cfg?.quick ? 10 : 30
    const gaps = Object.fromEntries(Object.keys(streamKinds).map((kind) => [kind, []]))
    const p99s = Object.fromEntries(Object.keys(streamKinds).map((kind) => [kind, []]))
    let broken = 0
    for (let round = 0; round < rounds; round++) {
      const inRound = Object.fromEntries(Object.keys(streamKinds).map((kind) => [kind, []]))
      for (let i = 0; i < streams + (round === 0 ? 5 : 0); i++) {
        for (const [kind, { pool, ...request }] of Object.entries(streamKinds)) {
          const stream = await streamGaps(pool, request)
          if (!stream.whole) broken++
          if (round > 0 || i >= 5) inRound[kind].push(...stream.gaps)
        }
      }
      for (const kind of Object.keys(streamKinds)) {
        gaps[kind].push(...inRound[kind])
        p99s[kind].push(percentile(inRound[kind], 99))
      }
    }
    const perFrame = await framingMicros(framing, ctx.cfg?.quick ? 20_000 : 100_000)
    const gap = (kind, p) => percentile(gaps[kind], p)
    const added = (kind) => p99s[kind].map((value, round) => value - p99s[`${kind}Direct`][round])
    const eventStreamAdded = summary(added('eventStream'))
    const sseAdded = summary(added('sse'))
    const gapAdded = summary(added('eventStream').map((value, round) => value - (added('sse')[round] ?? Number.NaN)))
    const p50 = (kind) => percentile(times[kind], 50)
    const bedrockAdded = p50('bedrock') - p50('bedrockDirect')
    const anthropicAdded = p50('anthropic') - p50('anthropicDirect')
    const rows = [
      ['SigV4 signing per call (authorizer, 1 KB body)', `${num(signing, 1)} µs`, '≤ 30 µs', signing <= 30 ? 'met' : 'missed'],
      ['the same with @smithy/signature-v4 alone (static credentials)', `${num(library, 1)} µs`, '', ''],
      ['Claude on Bedrock: added p50 (gateway − direct InvokeModel)', `${num(bedrockAdded * 1000, 0)} µs`, '', ''],
      ['Claude on Anthropic: added p50 (gateway − direct Messages)', `${num(anthropicAdded * 1000, 0)} µs`, '', ''],
      [
        'Bedrock added ÷ Anthropic added',
        num(bedrockAdded / anthropicAdded),
        '≤ 1.3',
        bedrockAdded / anthropicAdded <= 1.3 ? 'met' : 'missed',
      ],
      ...[
        ['Bedrock event-stream upstream, through the gateway', 'eventStream'],
        ['the same event stream read directly', 'eventStreamDirect'],
        ['Anthropic SSE upstream, through the gateway', 'sse'],
        ['the same SSE read directly', 'sseDirect'],
      ].map(([what, kind]) => [
        `stream inter-frame p50 / p99: ${what}`,
        `${num(gap(kind, 50), 3)} / ${spread(summary(p99s[kind]), 3)} ms`,
        '',
        '',
      ]),
      [
        "event-stream frame read as SSE: the gateway's own work per frame (CRCs, chunk decoded, event written)",
        `${num(perFrame, 1)} µs`,
        '≤ 100 µs',
        perFrame <= 100 ? 'met' : 'missed',
      ],
      ['added inter-frame p99: event-stream upstream', `${spread(eventStreamAdded, 3)} ms`, '', ''],
      ['added inter-frame p99: SSE upstream', `${spread(sseAdded, 3)} ms`, '', ''],
      [
        'event-stream − SSE upstream added inter-frame p99',
        `${spread(gapAdded, 3)} ms`,
        '≤ +0.1 ms',
        broken > 0 ? `${broken} stream(s) incomplete` : gapAdded.median <= 0.1 ? 'met' : 'missed',
      ],
    ]
    const text = section(
      'Bedrock upstreams',
      [
        `${calls} signings × 5 rounds (median); ${n} interleaved calls per kind after 100 warm-up, in one process.`,
        `${rounds} rounds of ${streams} interleaved streams per kind (5 warm-up first), each ${STREAM_CHUNKS} deltas ${STREAM_GAP_MS} ms apart; gaps between the client's reads; p99 as median (min–max) of the rounds; added = through the gateway − read directly, per round.`,
      ],
      table(['row', 'figure', 'target', 'verdict'], rows),
    )
    return {
      text,
      signingMicros: signing,
      libraryMicros: library,
      bedrockAdded,
      anthropicAdded,
      gapAdded: gapAdded.median,
      framingMicros: perFrame,
    }
  } finally {
    await viaGateway.close()
    await direct.close()
    await new Promise((resolve) => server.close(resolve))
    await gateway.close()
    await mock.close()
  }
}
