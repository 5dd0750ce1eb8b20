// Part 20: Bedrock upstreams. What SigV4 costs per call (the authorizer on a 1 KB body, credentials kept, so the
// signing alone; beside it `@smithy/signature-v4` used alone, the library's own cost), and what a call to Claude on Bedrock adds over the same upstream call made directly: an Anthropic
// client through the gateway (body rewritten for InvokeModel, the answer passed back) against the upstream request's
// twin sent straight to the mock's InvokeModel route, both with a Bedrock API key (so the mock does the same work for
// each), interleaved call by call; the same for an Anthropic upstream as the yardstick. A signed call adds the first
// row to the second. In-process: gateway, mock and load share one event loop.
import http from 'node:http'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Pool } from 'undici'
import { num, section, table } from '../lib/report.mjs'
import { median, percentile } from '../lib/stats.mjs'

const dist = new URL('../../dist/', import.meta.url)
const load = (name) => import(pathToFileURL(fileURLToPath(new URL(name, dist))).href)

const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const KEY = 'sk-bench-bedrock'
const PROMPT = 'Summarise the plot of a long novel in one line. '.repeat(20)

/**
 * The gateway's SigV4 authorizer, which no entry exports: bundled from its source by esbuild into dist/ (its packages
 * left to node_modules), so the row times the gateway's own code.
 */
async function sourceAuthorizer() {
  const { build } = await import('esbuild')
  const outfile = fileURLToPath(new URL('bench-sigv4.mjs', dist))
  await build({
    entryPoints: [fileURLToPath(new URL('../../src/dialects/bedrock/sigv4.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'error',
  })
  return import(pathToFileURL(outfile).href)
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

/** One call's time in ms. */
async function timed(pool, options) {
  const started = process.hrtime.bigint()
  const res = await pool.request({ method: 'POST', ...options })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`bench call answered ${res.statusCode}`)
  return Number(process.hrtime.bigint() - started) / 1e6
}

/** @param {{ cfg: { quick?: boolean }, log: (line: string) => void }} ctx */
export async function bedrockPart(ctx) {
  const [{ createGateway }, { nodeHandler }, { startMockUpstream, MOCK_AWS_CREDENTIALS }, dialects] = await Promise.all([
    load('index.js'),
    load('node.js'),
    load('testing.js'),
    sourceAuthorizer(),
  ])
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
        const ms = await timed(kind.endsWith('Direct') ? direct : viaGateway, options)
        if (i >= 100) times[kind].push(ms)
      }
    }
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
    ]
    const text = section(
      'Bedrock upstreams',
      [`${calls} signings × 5 rounds (median); ${n} interleaved calls per kind after 100 warm-up, in one process.`],
      table(['row', 'figure', 'target', 'verdict'], rows),
    )
    return { text, signingMicros: signing, libraryMicros: library, bedrockAdded, anthropicAdded }
  } finally {
    await viaGateway.close()
    await direct.close()
    await new Promise((resolve) => server.close(resolve))
    await gateway.close()
    await mock.close()
  }
}
