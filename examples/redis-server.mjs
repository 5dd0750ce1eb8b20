// The example gateway on node:http with its recovery records in Redis, so several instances share them:
//
//   REDIS_URL=redis://127.0.0.1:6379 node examples/redis-server.mjs            # http://127.0.0.1:8080
//   REDIS_URL=redis://127.0.0.1:6379 PORT=8081 node examples/redis-server.mjs  # a second instance
//
// Cut a request off on one instance, then list and fetch its record through the other. With no
// OPENAI_API_KEY each instance runs against its own local mock upstream (3 s per answer by default).
import http from 'node:http'
import { createKeyv } from '@keyv/redis'
import { createGateway } from 'model-gateway'
import { nodeHandler } from 'model-gateway/node'
import { startMockUpstream } from 'model-gateway/testing'

const port = Number(process.env.PORT ?? 8080)
const demoKey = process.env.GATEWAY_KEY ?? 'sk-demo-key'
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
// createKeyv throws a bare "Invalid URL" for `127.0.0.1:6379`: say which one, and what it needs.
if (!/^rediss?:\/\//.test(redisUrl)) {
  console.error(`REDIS_URL '${redisUrl}' needs its scheme: redis://host:port (rediss:// for TLS).`)
  process.exit(1)
}

// Fail fast while Redis is down instead of queueing commands: no offline queue, bounded connects, capped
// reconnect backoff. The namespace is the key prefix; instances that share records must use the same one.
const store = createKeyv(
  {
    url: redisUrl,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 500) + Math.floor(Math.random() * 100) },
  },
  { namespace: process.env.REDIS_NAMESPACE ?? 'model-gateway', connectionTimeout: 2000 },
)

let mock
let upstreams
let models
if (process.env.OPENAI_API_KEY) {
  upstreams = {
    openai: { type: 'openai', baseUrl: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY },
  }
  models = [{ id: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', upstream: 'openai' }]
} else {
  mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 3000) })
  upstreams = { mock: { type: 'openai', baseUrl: `${mock.url}/v1` } }
  models = [{ id: 'gpt-4o-mini', upstream: 'mock' }]
}

const gateway = createGateway({ upstreams, models, auth: { apiKeys: [demoKey] }, store })
// Fail at start, not on the first call, when Redis cannot be reached.
try {
  await gateway.ready()
} catch (error) {
  console.error(`${error.message} (REDIS_URL ${redisUrl})`)
  await gateway.close()
  await mock?.close()
  process.exit(1)
}

const server = http.createServer(nodeHandler(gateway))
server.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${port}`
  const body = JSON.stringify({ model: models[0].id, messages: [{ role: 'user', content: 'Hello' }] })
  console.log(`model-gateway listening on ${base}, recovery records in Redis at ${redisUrl}
API key for this demo: ${demoKey}

  # cut a request off, then find its record (through this instance or any other on the same Redis)
  curl -s --max-time 1 ${base}/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body}'
  sleep 3
  curl -s ${base}/v1/recoveries -H 'Authorization: Bearer ${demoKey}'
  curl -s ${base}/v1/recoveries/<request_id> -H 'Authorization: Bearer ${demoKey}'
`)
})

async function shutdown() {
  server.close()
  server.closeIdleConnections()
  // Waits for in-flight calls and record writes, then disconnects the Redis client.
  await gateway.close()
  await mock?.close()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
