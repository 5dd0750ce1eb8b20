// An Express app with routes of its own and the gateway mounted under /ai, against the local mock upstream:
// `npm run example:express`, then try the curl commands it prints. PORT, GATEWAY_KEY and MOCK_DELAY_MS
// change the port, the demo key and the mock's answer time.
import express from 'express'
import { createGateway } from 'model-gateway'
import { expressMiddleware } from 'model-gateway/express'
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

const app = express()
app.disable('x-powered-by')

// The host's request log sees the gateway's requests too (with their full URL).
app.use((req, res, next) => {
  const started = Date.now()
  res.on('finish', () => console.log(`${req.method} ${req.originalUrl} ${res.statusCode} ${Date.now() - started}ms`))
  next()
})

// The host's own API: its own session check and its own JSON parser, on its routes only. The gateway
// checks its own API keys, and reads its bodies itself.
const api = express.Router()
api.use((req, res, next) => (req.get('x-session') === session ? next() : res.status(401).json({ error: 'no session' })))
api.use(express.json())
api.get('/me', (_req, res) => res.json({ user: 'demo' }))
api.post('/notes', (req, res) => res.status(201).json({ saved: req.body }))
app.use('/api', api)

app.get('/', (_req, res) => res.type('text').send('Host app: own API under /api, model gateway under /ai.\n'))
app.use('/ai', expressMiddleware(gateway))

// Paths under /ai that the gateway does not serve arrive here too, through next().
app.use((req, res) => res.status(404).json({ error: `no route for ${req.method} ${req.originalUrl}` }))
app.use((error, _req, res, _next) => res.status(error.status ?? 500).json({ error: error.message }))

const server = app.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
  const auth = `-H 'Authorization: Bearer ${demoKey}'`
  console.log(`Express example listening on ${base} (gateway under ${base}/ai, mock upstream at ${mock.url})
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
// Responses over WebSocket: the server Express listens on hands upgrades to the gateway.
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
