import OpenAI from 'openai'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createRecoveringFetch, type RecoveringFetchEvent } from '../../src/client/index.js'
import { type CuttingProxy, type Fate, startCuttingProxy } from '../support/cutting-proxy.js'
import { type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { NODE_KINDS } from '../support/servers.js'

// The client's background mode, end to end: the openai SDK unchanged but for its fetch, a cutting proxy in front of
// the gateway as the main base URL and the gateway itself as the CDN-free one. The app asks for a plain response or
// stream; the client creates a background response and polls or streams it by id, resuming after a cut.

let fx: Fixture
let proxy: CuttingProxy
/** What the proxy does with each request: a test sets it. */
let choose: (request: { method: string; path: string }) => Fate = () => ({ kind: 'pass' })
beforeAll(async () => {
  fx = await startFixture(NODE_KINDS[0]!)
  proxy = await startCuttingProxy(fx.url, (request) => choose(request))
})
afterAll(async () => {
  await proxy.close()
  await fx.close()
})

function client(events: RecoveringFetchEvent[] = []) {
  const fetch = createRecoveringFetch({
    baseUrls: [`${proxy.url}/v1`, `${fx.url}/v1`],
    background: true,
    backgroundPollMs: 20,
    onEvent: (event) => events.push(event),
  })
  return new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: KEY_A, fetch, maxRetries: 0 })
}

/** The upstream requests whose body carries `marker`. */
const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))

it('a whole Responses call runs as a background response, polled by id: the app gets the plain answer', async () => {
  choose = () => ({ kind: 'pass' })
  const marker = 'client bg whole'
  fx.mock.steer(marker, { delay_ms: 150 })
  const from = proxy.log.length
  const response = await client().responses.create({ model: 'gemini-2.5-flash', input: marker })
  expect(response.output_text).toBe(`Echo: ${marker}`)
  expect(response.status).toBe('completed')
  const seen = proxy.log.slice(from)
  expect(seen[0]).toMatchObject({ method: 'POST', path: '/v1/responses' })
  // Polled by id, never one long request.
  expect(seen.slice(1).every((r) => r.method === 'GET' && r.path === `/v1/responses/${response.id}`)).toBe(true)
  expect(seen.length).toBeGreaterThan(1)
  expect(upstream(marker)).toHaveLength(1)
})

it('a streamed call is read by id and resumed after a cut from the last sequence number: every event once', async () => {
  const marker = 'client bg stream'
  fx.mock.steer(marker, { chunks: 8, chunk_delay_ms: 20 })
  let cuts = 0
  // The first read of the stream is cut after some events; the rest pass.
  choose = ({ method, path }) =>
    method === 'GET' && path.includes('stream=true') && cuts++ === 0 ? { kind: 'cut-after-bytes', bytes: 1500 } : { kind: 'pass' }
  const events: RecoveringFetchEvent[] = []
  const stream = await client(events).responses.create({ model: 'gpt-4o-mini', input: marker, stream: true })
  const got: Array<{ type: string; sequence_number: number; delta?: string }> = []
  for await (const event of stream) got.push(event)
  expect(got.map((e) => e.sequence_number)).toEqual(got.map((_, i) => i))
  expect(got.at(-1)?.type).toBe('response.completed')
  expect(got.map((e) => e.delta ?? '').join('')).toBe(`Echo: ${marker}`)
  const resume = events.find((e) => e.type === 'resume')
  expect(resume).toMatchObject({ type: 'resume' })
  expect(resume && 'url' in resume ? resume.url : '').toMatch(/starting_after=\d+/)
  expect(upstream(marker)).toHaveLength(1)
})

it("the app's abort cancels the background response: the gateway stops its upstream call", async () => {
  choose = () => ({ kind: 'pass' })
  const marker = 'client bg abort'
  fx.mock.steer(marker, { chunks: 50, chunk_delay_ms: 50 })
  const events: RecoveringFetchEvent[] = []
  const app = new AbortController()
  const stream = await client(events).responses.create({ model: 'gpt-4o-mini', input: marker, stream: true }, { signal: app.signal })
  const aborted = fx.mock.abortedStreams
  const reading = (async () => {
    for await (const event of stream) if (event.type === 'response.output_text.delta') app.abort()
  })()
  // The SDK ends its iteration quietly on its own abort.
  await reading.catch(() => {})
  await fx.mock.waitFor(() => fx.mock.abortedStreams > aborted)
  const cancel = events.find((e) => e.type === 'cancel')
  expect(cancel && 'url' in cancel ? cancel.url : '').toMatch(/\/v1\/responses\/resp_\w+\/cancel$/)
})

it('the option is checked: a bad backgroundPollMs is a TypeError naming it', () => {
  expect(() => createRecoveringFetch({ baseUrls: [fx.url], background: true, backgroundPollMs: 0 })).toThrow(/backgroundPollMs/)
})
