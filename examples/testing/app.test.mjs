// The app's own test, offline: the mock upstream of model-gateway/testing stands in for the model API.
// Run it with `node --test examples/testing/app.test.mjs`.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startMockUpstream } from 'model-gateway/testing'
import OpenAI from 'openai'
import { createApp } from './app.mjs'

let mock
let server
let gateway
let baseURL

before(async () => {
  mock = await startMockUpstream()
  const built = createApp({ upstreamUrl: `${mock.url}/v1`, upstreamKey: 'sk-upstream-test', clientKeys: ['sk-client-test'] })
  gateway = built.gateway
  server = built.app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  baseURL = `http://127.0.0.1:${server.address().port}/ai/v1`
})

after(async () => {
  server.close()
  await gateway.close()
  await mock.close()
})

test('a chat completion goes through the gateway to the upstream, with the gateway key', async () => {
  const client = new OpenAI({ apiKey: 'sk-client-test', baseURL })
  const completion = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hello' }],
  })
  assert.equal(completion.choices[0].message.content, 'Echo: Hello')
  assert.equal(mock.requests.length, 1)
  assert.equal(mock.requests[0].headers.authorization, 'Bearer sk-upstream-test')
})

test('a wrong client key is refused before anything goes upstream', async () => {
  const before = mock.requests.length
  const client = new OpenAI({ apiKey: 'sk-wrong', baseURL, maxRetries: 0 })
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }), {
    status: 401,
  })
  assert.equal(mock.requests.length, before)
})

test('the app keeps its own routes', async () => {
  const address = `http://127.0.0.1:${server.address().port}`
  assert.deepEqual(await (await fetch(`${address}/api/hello`)).json(), { hello: 'world' })
})
