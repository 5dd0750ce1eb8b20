// A Koa app with routes of its own and the gateway under the /ai prefix, against the local mock upstream:
// `npm run example:koa`, then try the curl commands it prints. PORT, GATEWAY_KEY and MOCK_DELAY_MS
// change the port, the demo key and the mock's answer time.
import { bodyParser } from '@koa/bodyparser'
import Koa from 'koa'
import { createGateway } from 'model-gateway'
import { koaMiddleware } from 'model-gateway/koa'
import { upgradeHandler } from 'model-gateway/node'
import { startMockUpstream } from 'model-gateway/testing'

const port = Number(process.env.PORT ?? 8080)
const demoKey = process.env.GATEWAY_KEY ?? 'sk-demo-key'
const session = 'demo-session'

// 3 s per answer by default, so `curl --max-time 1` can cut a request off to show the recovery flow.
const mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 3000) })
const gateway = createGateway({
  upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1` }, 'mock-gemini': { type: 'gemini', baseUrl: mock.url } },
  models: [
    { id: 'gpt-4o-mini', upstream: 'mock' },
    { id: 'gemini-2.5-flash', upstream: 'mock-gemini' },
  ],
  auth: { apiKeys: [demoKey] },
})

const app = new Koa()

// The host's error handler and request log wrap everything, the gateway included.
app.use(async (ctx, next) => {
  const started = Date.now()
  // On `finish`, not after `await next()`: the gateway has already answered by the time it returns.
  ctx.res.once('finish', () => console.log(`${ctx.method} ${ctx.url} ${ctx.res.statusCode} ${Date.now() - started}ms`))
  try {
    await next()
  } catch (error) {
    if (ctx.headerSent) throw error
    ctx.status = error.status ?? 500
    ctx.body = { error: error.message }
  }
})

// A body parser for the whole app: the gateway forwards the bytes it kept (`ctx.request.rawBody`).
// Its limit applies before the gateway's: raise it for large model requests.
app.use(bodyParser({ jsonLimit: '64mb' }))

// The host's own API behind its own session check; the gateway checks its own API keys.
app.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/api/')) return next()
  if (ctx.get('x-session') !== session) ctx.throw(401, 'no session')
  if (ctx.method === 'GET' && ctx.path === '/api/me') ctx.body = { user: 'demo' }
  else if (ctx.method === 'POST' && ctx.path === '/api/notes') {
    ctx.status = 201
    ctx.body = { saved: ctx.request.body }
  } else await next()
})

app.use(koaMiddleware(gateway, { prefix: '/ai' }))

// Requests the gateway does not route (under /ai or not) go on, as usual in Koa.
app.use((ctx) => {
  if (ctx.path === '/') ctx.body = 'Host app: own API under /api, model gateway under /ai.\n'
  else {
    ctx.status = 404
    ctx.body = { error: `no route for ${ctx.method} ${ctx.url}` }
  }
})

const server = app.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
  const auth = `-H 'Authorization: Bearer ${demoKey}'`
  console.log(`Koa example listening on ${base} (gateway under ${base}/ai, mock upstream at ${mock.url})
API key for the gateway: ${demoKey}

  # the host's own routes
  curl -s ${base}/api/me -H 'x-session: ${session}'
  curl -s ${base}/api/notes -H 'x-session: ${session}' -H 'Content-Type: application/json' -d '{"text":"hi"}'

  # the gateway
  curl -s ${base}/ai/v1/models
  curl -s ${base}/ai/v1/chat/completions ${auth} -H 'Content-Type: application/json' -d '${body}'

  # the recovery flow: cut a request off, then find its response
  curl -s --max-time 1 ${base}/ai/v1/chat/completions ${auth} -H 'Content-Type: application/json' -d '${body}'
  sleep 3
  curl -s ${base}/ai/v1/recoveries ${auth}
`)
})
// Responses over WebSocket: the server Koa listens on hands upgrades to the gateway.
server.on('upgrade', upgradeHandler(gateway, { prefix: '/ai' }))

async function shutdown() {
  server.close()
  server.closeIdleConnections()
  await gateway.close()
  await mock.close()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
