// The tools against lost answers, one after the other, against the local mock upstream (no key, no network):
// a background response, the client's background mode, the client's alternate base URLs, and Recoveries for a call
// whose client gave up. `node examples/lost-answers.mjs` (after `npm run build`); see docs/guides/lost-answers.md.
import http from 'node:http'
import { createGateway } from 'model-gateway'
import { createRecoveringFetch } from 'model-gateway/client'
import { nodeHandler } from 'model-gateway/node'
import { startMockUpstream } from 'model-gateway/testing'
import OpenAI from 'openai'

const KEY = 'sk-demo-key'
// Every answer takes this long: long enough for a client to give up on it in step 4.
const mock = await startMockUpstream({ delayMs: Number(process.env.MOCK_DELAY_MS ?? 500) })
const gateway = createGateway({
  upstreams: { mock: { type: 'openai', baseUrl: `${mock.url}/v1` }, 'mock-gemini': { type: 'gemini', baseUrl: mock.url } },
  models: [
    { id: 'gpt-4o-mini', upstream: 'mock' },
    { id: 'gemini-2.5-flash', upstream: 'mock-gemini' },
  ],
  auth: { apiKeys: [KEY] },
})
const server = http.createServer(nodeHandler(gateway))
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${server.address().port}`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// 1. Background response: the create answers at once with an id; the answer is fetched by id, as often as needed,
//    on short requests. Works for a model of any upstream (here a Gemini one, through translation).
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY })
const created = await openai.responses.create({ model: 'gemini-2.5-flash', input: 'Hello in the background', background: true })
console.log(`1. background: created ${created.id}, status ${created.status}`)
let response = created
while (response.status === 'queued' || response.status === 'in_progress') {
  await sleep(100)
  response = await openai.responses.retrieve(created.id)
}
console.log(`   retrieved: ${response.status}, "${response.output_text}"`)

// 2. The client's background mode: the app's code is a plain call; the client makes it a background response.
const backgroundFetch = createRecoveringFetch({ baseUrls: [`${base}/v1`], background: true, backgroundPollMs: 100 })
const viaClient = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, fetch: backgroundFetch })
const plain = await viaClient.responses.create({ model: 'gpt-4o-mini', input: 'Hello through the client' })
console.log(`2. client background mode: ${plain.status}, "${plain.output_text}"`)

// 3. Alternate base URLs: the main address (here one where nothing listens, as a CDN that fails) is tried first; the
//    call goes on at the next address with the same Idempotency-Key, so it is never paid twice.
const down = http.createServer()
await new Promise((resolve) => down.listen(0, '127.0.0.1', resolve))
const downBase = `http://127.0.0.1:${down.address().port}/v1`
await new Promise((resolve) => down.close(resolve))
const failover = createRecoveringFetch({
  baseUrls: [downBase, `${base}/v1`],
  onEvent: (event) =>
    event.type === 'failover' && console.log(`3. alternate base URLs: ${event.reason} at ${event.from}, on to ${event.to}`),
})
const chat = await new OpenAI({ baseURL: downBase, apiKey: KEY, fetch: failover, maxRetries: 0 }).chat.completions.create({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Hello over another address' }],
})
console.log(`   answered: "${chat.choices[0].message.content}"`)

// 4. Recoveries: a client that gave up before the answer came; the gateway kept it, found again by the body sent.
const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello, I will not wait' }] }
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
await fetch(`${base}/v1/chat/completions`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify(body),
  signal: AbortSignal.timeout(100),
}).catch(() => console.log('4. Recoveries: the client gave up after 100 ms'))
let found
for (let tries = 0; !found && tries < 50; tries++) {
  await sleep(100)
  const lookup = await fetch(`${base}/v1/recoveries/lookup`, { method: 'POST', headers: auth, body: JSON.stringify(body) })
  found = (await lookup.json()).items?.[0]
}
const record = await (await fetch(`${base}/v1/recoveries/${found.request_id}`, { headers: auth })).json()
console.log(`   kept as ${found.request_id}: "${JSON.parse(record.response.body_raw).choices[0].message.content}"`)

server.close()
await gateway.close()
await mock.close()
