// A gateway on plain node:http. With no OPENAI_API_KEY it runs against the local mock upstream, so it
// works with no key and no network: `npm start`, then try the curl commands it prints.
import http from 'node:http'
import { createGateway } from 'model-gateway'
import { nodeHandler, upgradeHandler } from 'model-gateway/node'
import { MOCK_AWS_CREDENTIALS, startMockUpstream } from 'model-gateway/testing'

const port = Number(process.env.PORT ?? 8080)
const demoKey = process.env.GATEWAY_KEY ?? 'sk-demo-key'

let mock
let upstreams
let models
if (process.env.OPENAI_API_KEY) {
  upstreams = {
    openai: { type: 'openai', baseUrl: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY },
  }
  models = [{ id: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', upstream: 'openai' }]
} else {
  // The mock takes 3 s per answer by default, so `curl --max-time 1` can cut a request off for the demo.
  mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 3000) })
  upstreams = {
    mock: { type: 'openai', baseUrl: `${mock.url}/v1` },
    'mock-gemini': { type: 'gemini', baseUrl: mock.url },
    'mock-anthropic': { type: 'anthropic', baseUrl: mock.url },
    // Vertex AI on the mock: a service-account key made for the mock, whose token_uri is the mock's token endpoint.
    'mock-vertex': {
      type: 'vertex',
      project: 'mock-project',
      location: 'us-central1',
      baseUrl: mock.url,
      credentials: mock.vertex.createServiceAccount(),
    },
    // The mock's Bedrock routes check SigV4 signatures for real, with the test credentials it accepts.
    'mock-bedrock': { type: 'bedrock', baseUrl: mock.url, region: 'us-east-1', credentials: MOCK_AWS_CREDENTIALS },
  }
  models = [
    { id: 'gpt-4o-mini', upstream: 'mock' },
    { id: 'gemini-2.5-flash', upstream: 'mock-gemini' },
    { id: 'claude-sonnet-4-6', upstream: 'mock-anthropic' },
    { id: 'vertex-gemini-2.5-pro', upstream: 'mock-vertex', upstreamModel: 'gemini-2.5-pro' },
    { id: 'vertex-claude-opus-4-5', upstream: 'mock-vertex', upstreamModel: 'claude-opus-4-5@20251101' },
    { id: 'claude-on-bedrock', upstream: 'mock-bedrock', upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  ]
  // Claude Code declares its tools on every call, and the mock calls the first tool a request declares when the user
  // spoke last. Claude Code's calls (its system prompt carries its billing header) get a text answer instead.
  mock.steer('x-anthropic-billing-header', { content: 'Hello from the mock upstream, through model-gateway.' })
}

const gateway = createGateway({
  upstreams,
  models,
  auth: { apiKeys: [demoKey] },
  onUsage: (u) =>
    console.log(`usage ${u.requestId} ${u.model}: ${u.input_tokens} in, ${u.output_tokens} out${u.recovered ? ' (recovered)' : ''}`),
})

const server = http.createServer(nodeHandler(gateway))
// Responses over WebSocket (Codex CLI with `supports_websockets = true`): upgrades never reach a request handler.
server.on('upgrade', upgradeHandler(gateway))
server.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`
  const model = models[0].id
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] })
  const gemini = models.find((m) => upstreams[m.upstream].type === 'gemini')?.id
  const geminiBody = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] })
  const claude = models.find((m) => upstreams[m.upstream].type === 'anthropic')?.id
  const claudeBody = JSON.stringify({
    model: claude,
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Hello' }],
  })
  const claudeHeaders = `-H 'x-api-key: ${demoKey}' -H 'anthropic-version: 2023-06-01' -H 'Content-Type: application/json'`
  console.log(`model-gateway listening on ${base} (${mock ? `mock upstream at ${mock.url}` : 'OpenAI-compatible upstream'})
API key for this demo: ${demoKey}

  # models (no key needed)
  curl -s ${base}/v1/models

  # a chat completion
  curl -s ${base}/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body}'

  # a stream
  curl -sN ${base}/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body.slice(0, -1)},"stream":true}'
${
  gemini
    ? `
  # the same in the Gemini format: the model is in the path, the key in x-goog-api-key
  curl -s ${base}/v1beta/models/${gemini}:generateContent -H 'x-goog-api-key: ${demoKey}' -H 'Content-Type: application/json' -d '${geminiBody}'
  curl -sN '${base}/v1beta/models/${gemini}:streamGenerateContent?alt=sse' -H 'x-goog-api-key: ${demoKey}' -H 'Content-Type: application/json' -d '${geminiBody}'
`
    : ''
}${
  claude
    ? `
  # the same in Anthropic's Messages format: the key in x-api-key, the API version in anthropic-version
  curl -s ${base}/v1/messages ${claudeHeaders} -d '${claudeBody}'
  curl -sN ${base}/v1/messages ${claudeHeaders} -d '${claudeBody.slice(0, -1)},"stream":true}'

  # Claude Code on this gateway
  ANTHROPIC_BASE_URL=${base} ANTHROPIC_API_KEY=${demoKey} claude -p --model ${claude} "hi"
`
    : ''
}
  # the recovery flow: cut a request off, then find and fetch its response
  curl -s --max-time 1 ${base}/v1/chat/completions -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body}'
  sleep 3
  curl -s ${base}/v1/recoveries -H 'Authorization: Bearer ${demoKey}'
  curl -s ${base}/v1/recoveries/lookup -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' -d '${body}'
  curl -s ${base}/v1/recoveries/<request_id> -H 'Authorization: Bearer ${demoKey}'
  curl -s -X DELETE '${base}/v1/recoveries?all=true&dry_run=true' -H 'Authorization: Bearer ${demoKey}'
`)
})

async function shutdown() {
  server.close()
  server.closeIdleConnections()
  await gateway.close()
  await mock?.close()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
