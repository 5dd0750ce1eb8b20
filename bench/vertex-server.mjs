// Part 12c's server: one gateway (dist/) with the same Gemini and Claude models twice, on their own APIs and on
// Vertex AI, all on a mock upstream (dist/testing) in this process, whose token endpoint issues the Vertex token from
// a service account made for it. Reports `{ type: 'ready', port, mockUrl }` over IPC; `{ type: 'skip' }` unbuilt.
import { existsSync } from 'node:fs'
import http from 'node:http'
import { fileURLToPath } from 'node:url'

const dist = new URL('../dist/', import.meta.url)
if (!existsSync(fileURLToPath(new URL('index.js', dist)))) {
  process.send?.({ type: 'skip', reason: 'dist/ is not built' })
} else {
  const { createGateway } = await import(new URL('index.js', dist).href)
  const { nodeHandler } = await import(new URL('node.js', dist).href)
  const { startMockUpstream } = await import(new URL('testing.js', dist).href)
  const mock = await startMockUpstream({ port: 0, record: false })
  const gateway = createGateway({
    upstreams: {
      openai: { type: 'openai', baseUrl: `${mock.url}/v1` },
      gemini: { type: 'gemini', baseUrl: mock.url },
      anthropic: { type: 'anthropic', baseUrl: mock.url },
      vertex: {
        type: 'vertex',
        project: 'bench-project',
        location: 'us-central1',
        baseUrl: mock.url,
        credentials: mock.vertex.createServiceAccount(),
      },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'openai' },
      { id: 'gemini-2.5-flash', upstream: 'gemini' },
      { id: 'claude-sonnet-4-5', upstream: 'anthropic' },
      { id: 'vertex-gemini', upstream: 'vertex', upstreamModel: 'gemini-2.5-flash' },
      { id: 'vertex-claude', upstream: 'vertex', upstreamModel: 'claude-sonnet-4-5@20250929' },
    ],
    auth: { apiKeys: [process.env.BENCH_KEY ?? 'sk-bench'] },
    logger: { warn() {}, error() {} },
  })
  const server = http.createServer({ keepAliveTimeout: 30_000 }, nodeHandler(gateway))
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'ready', port: server.address().port, mockUrl: mock.url })
  })
}
