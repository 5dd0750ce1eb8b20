// Part 21: Converse clients. What the gateway adds to an AWS SDK-shaped Converse call: passthrough to a Bedrock model
// that takes Converse (against the same call sent straight to the mock's Converse route, both with a Bedrock API key
// so the mock does the same work), and translated to an Anthropic upstream (against the Messages call sent straight
// to the mock); interleaved call by call, the Messages passthrough through the gateway as the yardstick. In-process.
import http from 'node:http'
import { Pool } from 'undici'
import { loadDist, timedPost } from '../lib/dist.mjs'
import { num, section, table } from '../lib/report.mjs'
import { percentile } from '../lib/stats.mjs'

const NOVA = 'us.amazon.nova-pro-v1:0'
const CLAUDE = 'claude-sonnet-4-5'
const KEY = 'sk-bench-converse'
const PROMPT = 'Summarise the plot of a long novel in one line. '.repeat(20)

/** @param {{ cfg: { quick?: boolean }, log: (line: string) => void }} ctx */
export async function bedrockConversePart(ctx) {
  const [{ createGateway }, { nodeHandler }, { startMockUpstream }] = await Promise.all([
    loadDist('index.js'),
    loadDist('node.js'),
    loadDist('testing.js'),
  ])
  const mock = await startMockUpstream({ record: false, bedrock: { apiKeys: ['bedrock-bench-key'] } })
  const gateway = createGateway({
    upstreams: {
      aws: { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', apiKey: 'bedrock-bench-key' },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: 'anthropic-bench-key' },
    },
    models: [
      { id: 'nova', upstream: 'aws', upstreamModel: NOVA },
      { id: 'claude', upstream: 'claude', upstreamModel: CLAUDE },
    ],
    auth: { apiKeys: [KEY] },
    logger: { warn() {}, error() {} },
  })
  const server = http.createServer(nodeHandler(gateway))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const viaGateway = new Pool(`http://127.0.0.1:${server.address().port}`, { connections: 1 })
  const direct = new Pool(mock.url, { connections: 1 })
  try {
    const converse = JSON.stringify({ messages: [{ role: 'user', content: [{ text: PROMPT }] }], inferenceConfig: { maxTokens: 64 } })
    const sdk = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }
    const messages = [{ role: 'user', content: PROMPT }]
    const anthropicClient = { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }
    const kinds = {
      passthrough: { path: '/model/nova/converse', headers: sdk, body: converse },
      passthroughDirect: {
        path: `/model/${encodeURIComponent(NOVA)}/converse`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer bedrock-bench-key' },
        body: converse,
      },
      translated: { path: '/model/claude/converse', headers: sdk, body: converse },
      messages: { path: '/v1/messages', headers: anthropicClient, body: JSON.stringify({ model: 'claude', max_tokens: 64, messages }) },
      messagesDirect: {
        path: '/v1/messages',
        headers: { ...anthropicClient, 'x-api-key': 'anthropic-bench-key' },
        body: JSON.stringify({ model: CLAUDE, max_tokens: 64, messages }),
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
    const p50 = (kind) => percentile(times[kind], 50)
    const messagesAdded = p50('messages') - p50('messagesDirect')
    const passthroughAdded = p50('passthrough') - p50('passthroughDirect')
    const translatedAdded = p50('translated') - p50('messagesDirect')
    const ratio = (added) => num(added / messagesAdded)
    const rows = [
      ['Messages passthrough: added p50 (gateway − direct)', `${num(messagesAdded * 1000, 0)} µs`, '', ''],
      ['Converse on Bedrock Converse (passthrough): added p50', `${num(passthroughAdded * 1000, 0)} µs`, '', ''],
      ['Converse on Anthropic (translated): added p50', `${num(translatedAdded * 1000, 0)} µs`, '', ''],
      ['passthrough added ÷ Messages added', ratio(passthroughAdded), '≤ 1.3', passthroughAdded / messagesAdded <= 1.3 ? 'met' : 'missed'],
      ['translated added ÷ Messages added', ratio(translatedAdded), '', ''],
    ]
    const text = section(
      'Converse clients',
      [`${n} interleaved calls per kind after 100 warm-up, in one process.`],
      table(['row', 'figure', 'target', 'verdict'], rows),
    )
    return { text, messagesAdded, passthroughAdded, translatedAdded }
  } finally {
    await viaGateway.close()
    await direct.close()
    await new Promise((resolve) => server.close(resolve))
    await gateway.close()
    await mock.close()
  }
}
