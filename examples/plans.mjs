// Two plans for two kinds of users: free users get a few calls a minute and a small daily budget, pro users many
// more. The gateway prices every call (pricing), checks each owner's plan before the call goes upstream
// (limits.owners as a function of the owner) and answers one over its plan with 429 in its SDK's own error shape.
// It runs against the local mock upstream, sends itself a few calls as each user, prints what each one used, and
// keeps serving (EXIT_AFTER_DEMO=1 stops it after the demo):
//
//   node examples/plans.mjs
//
// With several gateway processes, pass a Redis store (see redis-server.mjs): the counters are then shared exactly.
import http from 'node:http'
import { createGateway, ownerId } from 'model-gateway'
import { nodeHandler } from 'model-gateway/node'
import { startMockUpstream } from 'model-gateway/testing'

// Your users and their plans; in a real host they come from your database.
const USERS = {
  'sk-ada-free': { user: 'ada', plan: 'free' },
  'sk-grace-pro': { user: 'grace', plan: 'pro' },
}
const PLANS = {
  free: { requestsPerMinute: 3, tokensPerMinute: 20_000, costPerDay: 0.05 },
  pro: { requestsPerMinute: 600, tokensPerMinute: 2_000_000, costPerDay: 50 },
}
// The gateway names each caller by a digest of the owner `authenticate` returns: the plan of each is found by it.
const planByOwnerId = new Map(Object.values(USERS).map(({ user, plan }) => [ownerId({ owner: user }), PLANS[plan]]))

const port = Number(process.env.PORT ?? 8080)
const mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 0) })
const gateway = createGateway({
  upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1` } },
  models: [{ id: 'gpt-4o-mini', upstream: 'mock' }],
  auth: { authenticate: (apiKey) => (USERS[apiKey] ? { owner: USERS[apiKey].user } : null) },
  // USD per million tokens.
  pricing: { 'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 } },
  limits: { owners: (owner) => planByOwnerId.get(owner) },
  onUsage: (u) => console.log(`usage ${u.requestId}: ${u.input_tokens} in, ${u.output_tokens} out, ${u.cost} n$`),
})

const server = http.createServer(nodeHandler(gateway))
server.listen(port, '127.0.0.1', async () => {
  const base = `http://127.0.0.1:${server.address().port}`
  console.log(`model-gateway listening on ${base}; keys: ${Object.keys(USERS).join(', ')}\n`)
  for (const [key, { user, plan }] of Object.entries(USERS)) {
    const statuses = []
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Hello from ${user}` }] }),
      })
      statuses.push(res.status)
      if (res.status === 429) {
        const { error } = await res.json()
        console.log(`${user}: 429 "${error.message}" (retry-after ${res.headers.get('retry-after')} s)`)
      } else await res.arrayBuffer()
    }
    const used = await gateway.usage(ownerId({ owner: user }))
    console.log(
      `${user} (${plan}): ${statuses.join(' ')}; this minute ${used.requests} calls, ${used.tokens} tokens; today ${used.cost} n$\n`,
    )
  }
  if (process.env.EXIT_AFTER_DEMO) await stop()
})

async function stop() {
  server.close()
  await gateway.close()
  await mock.close()
  process.exit(0)
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
