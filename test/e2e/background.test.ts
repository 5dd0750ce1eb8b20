import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway.js'
import { startMockUpstream } from '../../src/testing/index.js'
import type { UsageEvent } from '../../src/types.js'
import { checkResponsesStream, Tally } from '../conformance/check.js'
import { QUIRKS } from '../conformance/quirks.js'
import * as schemas from '../conformance/schemas/openai.js'
import { type Fixture, KEY_A, KEY_B, startFixture, UPSTREAM_KEY } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { OPENAI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

// Background responses through the official openai SDK, unchanged: the gateway runs the call itself, for a model of
// each upstream dialect (an OpenAI one passthrough, Gemini and Anthropic ones translated), keeps its state and events
// by id, and serves retrieve, a stream from a sequence number, cancel and delete.
const MODELS = [
  ['an OpenAI', 'gpt-4o-mini'],
  ['a Gemini', 'gemini-2.5-flash'],
  ['an Anthropic', 'claude-sonnet-4-5'],
] as const

let fx: Fixture
const usage: UsageEvent[] = []
const tally = new Tally()
beforeAll(async () => {
  fx = await startFixtureWithAnthropic()
})
afterAll(() => fx.close())

/** The fixture's chain, with one more upstream on the mock: it speaks Anthropic's Messages API too. */
async function startFixtureWithAnthropic(): Promise<Fixture> {
  const mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
  const gateway = createGateway({
    upstreams: {
      mock: { type: 'openai', baseUrl: `${mock.url}/v1`, apiKey: UPSTREAM_KEY },
      gem: { type: 'gemini', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
      claude: { type: 'anthropic', baseUrl: mock.url, apiKey: UPSTREAM_KEY },
    },
    models: [
      { id: 'gpt-4o-mini', upstream: 'mock' },
      { id: 'gemini-2.5-flash', upstream: 'gem' },
      { id: 'claude-sonnet-4-5', upstream: 'claude' },
    ],
    auth: { apiKeys: [KEY_A, KEY_B] },
    onUsage: (u) => usage.push(u),
    // A cancelled call's upstream attempt is logged as failed: quiet here, where cancels are the point.
    logger: { info: () => {}, warn: () => {}, error: (message, meta) => console.error(message, meta) },
  })
  const server = await NODE_KINDS[0]!.mount(gateway)
  return {
    url: server.url,
    gateway,
    mock,
    logs: [],
    async close() {
      await server.close()
      await gateway.close()
      await mock.close()
    },
  }
}

/** The upstream requests whose body carries `marker`. */
const upstream = (marker: string) => fx.mock.requests.filter((r) => r.body.includes(marker))

describe.each(OPENAI_SDKS)('%s background responses', (sdk, load) => {
  const client = async (key = KEY_A) => {
    const OpenAI = await load()
    return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: key, maxRetries: 0 })
  }

  describe.each(MODELS)('for %s model', (_, model) => {
    // Named as the conformance matrix names its cases: passthrough bytes carry the upstream's own quirks.
    const kind = model === 'gpt-4o-mini' ? 'passthrough' : 'translated'
    it('create answers before the upstream does; retrieve ends completed with the output, usage and the same id', async () => {
      const marker = `bg create ${sdk} ${model}`
      fx.mock.steer(marker, { delay_ms: 400 })
      const openai = await client()
      const created = await openai.responses.create({ model, input: marker, background: true })
      tally.check(`responses ${kind} background create`, 'body', schemas.response, created)
      expect(created).toMatchObject({ object: 'response', background: true, model })
      expect(['queued', 'in_progress']).toContain(created.status)
      expect(created.id).toMatch(/^resp_/)
      // The upstream has not answered yet: the create did not wait for it.
      expect(upstream(marker).every((r) => r.response === '')).toBe(true)
      const done = await eventually(async () => {
        const now = await openai.responses.retrieve(created.id)
        return now.status === 'completed' ? now : undefined
      })
      tally.check(`responses ${kind} background retrieve`, 'body', schemas.response, done)
      expect(done.id).toBe(created.id)
      expect(done.background).toBe(true)
      expect(done.output_text).toBe(`Echo: ${marker}`)
      expect(done.usage?.output_tokens).toBeGreaterThan(0)
      // The gateway runs the call: the upstream never hears of `background`.
      const [sent] = upstream(marker)
      expect(sent?.body).not.toContain('"background"')
      // Billed once, and never a recovery.
      const requestId = created.id.slice('resp_'.length)
      await eventually(() => usage.some((u) => u.requestId === requestId))
      await openai.responses.retrieve(created.id)
      expect(usage.filter((u) => u.requestId === requestId)).toHaveLength(1)
      const recoveries = await call(`${fx.url}/v1/recoveries`, { headers: { authorization: `Bearer ${KEY_A}` } })
      expect(JSON.stringify(recoveries.json)).not.toContain(requestId)
    })

    it('streams from a sequence number after a cut: the events resume where the client left, numbered on', async () => {
      const marker = `bg stream ${sdk} ${model}`
      fx.mock.steer(marker, { chunks: 6, chunk_delay_ms: 30 })
      const openai = await client()
      const stream = await openai.responses.create({ model, input: marker, background: true, stream: true })
      const first: Array<{ type: string; sequence_number: number; response?: { id: string } }> = []
      for await (const event of stream) {
        first.push(event)
        if (first.length === 3) break // the client's connection is cut here
      }
      const id = first[0]?.response?.id as string
      expect(first[0]?.type).toBe('response.created')
      const last = first.at(-1)?.sequence_number as number
      const rest: Array<{ type: string; sequence_number: number; delta?: string; response?: { id: string } }> = []
      for await (const event of await openai.responses.retrieve(id, { stream: true, starting_after: last })) rest.push(event)
      expect(rest[0]?.sequence_number).toBe(last + 1)
      expect(rest.map((event) => event.sequence_number)).toEqual(rest.map((_, i) => last + 1 + i))
      const end = rest.at(-1)
      expect(end?.type).toBe('response.completed')
      expect(end?.response?.id).toBe(id)
      const text = [...first, ...rest].map((e) => ('delta' in e && typeof e.delta === 'string' ? e.delta : '')).join('')
      expect(text).toBe(`Echo: ${marker}`)
      // Replayed whole once it ended, and every event as OpenAI publishes its shape.
      const replay = await call(`${fx.url}/v1/responses/${id}?stream=true`, { headers: { authorization: `Bearer ${KEY_A}` } })
      checkResponsesStream(tally, `responses ${kind} background stream replay`, replay.text)
      expect(replay.text).toContain(`"id":"${id}"`)
    })

    it('cancel stops the upstream call, and the state says cancelled', async () => {
      const marker = `bg cancel ${sdk} ${model}`
      fx.mock.steer(marker, { hang: true })
      const openai = await client()
      const created = await openai.responses.create({ model, input: marker, background: true })
      await eventually(() => upstream(marker).length === 1)
      const aborted = fx.mock.abortedStreams + fx.mock.abortedCalls
      const cancelled = await openai.responses.cancel(created.id)
      expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' })
      await fx.mock.waitFor(() => fx.mock.abortedStreams + fx.mock.abortedCalls > aborted)
      expect((await openai.responses.retrieve(created.id)).status).toBe('cancelled')
    })
  })

  it("another owner's retrieve, stream, cancel and delete are 404 in OpenAI's error shape", async () => {
    const marker = `bg owner ${sdk}`
    const created = await (await client()).responses.create({ model: 'gpt-4o-mini', input: marker, background: true })
    const bob = await client(KEY_B)
    for (const attempt of [
      () => bob.responses.retrieve(created.id),
      () => bob.responses.cancel(created.id),
      () => bob.responses.delete(created.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ status: 404 })
    }
    const raw = await call(`${fx.url}/v1/responses/${created.id}?stream=true`, { headers: { authorization: `Bearer ${KEY_B}` } })
    expect(raw.status).toBe(404)
    tally.check('responses passthrough background not found', 'body', schemas.errorResponse, raw.json)
  })

  it('delete removes the response: a retrieve after it is 404', async () => {
    const openai = await client()
    const created = await openai.responses.create({ model: 'gpt-4o-mini', input: `bg delete ${sdk}`, background: true })
    await eventually(async () => (await openai.responses.retrieve(created.id)).status === 'completed')
    const raw = await call(`${fx.url}/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${KEY_A}` } })
    expect(raw.json).toEqual({ id: created.id, object: 'response.deleted', deleted: true })
    await expect(openai.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 })
  })

  it('an upstream error ends the response failed, with its message', async () => {
    const marker = `bg failed ${sdk}`
    fx.mock.steer(marker, { status: 400, error_body: { error: { message: 'the model refused this', type: 'invalid_request_error' } } })
    const openai = await client()
    const created = await openai.responses.create({ model: 'gpt-4o-mini', input: marker, background: true })
    const failed = await eventually(async () => {
      const now = await openai.responses.retrieve(created.id)
      return now.status === 'failed' ? now : undefined
    })
    tally.check('responses passthrough background failed', 'body', schemas.response, failed)
    expect(failed.error?.message).toContain('the model refused this')
  })
})

describe('background bounds and bad input', () => {
  it.each([
    ['maxEvents', { maxEvents: 4 }],
    ['maxBytes', { maxBytes: 2048 }],
  ] as const)('a call past background.%s is stopped and ends failed, naming the option', async (name, bound) => {
    const small = await startFixture(NODE_KINDS[0]!, { background: bound })
    try {
      const created = await call(`${small.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', input: 'bg bound', background: true, mock: { chunks: 20 } }),
      })
      const id = (created.json as { id: string }).id
      const failed = await eventually(async () => {
        const now = (await call(`${small.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${KEY_A}` } })).json as {
          status: string
          error: { message: string }
        }
        return now.status === 'failed' ? now : undefined
      })
      expect(failed.error.message).toContain(`background.${name}`)
    } finally {
      await small.close()
    }
  })

  it('close() gives a running background call its timeout, then stops its upstream call instead of hanging', async () => {
    const own = await startFixture(NODE_KINDS[0]!, { logger: { info: () => {}, warn: () => {}, error: () => {} } })
    try {
      const marker = 'bg at shutdown'
      own.mock.steer(marker, { hang: true })
      const created = await call(`${own.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', input: marker, background: true }),
      })
      expect(created.status).toBe(200)
      await eventually(() => own.mock.requests.some((r) => r.body.includes(marker)))
      await own.gateway.close({ timeoutMs: 50 })
      await own.mock.waitFor(() => own.mock.abortedStreams + own.mock.abortedCalls > 0)
    } finally {
      await own.close()
    }
  })

  it('a create sent again with its Idempotency-Key gets the call the first one started: one upstream call', async () => {
    const marker = 'bg keyed create'
    const send = () =>
      call(`${fx.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': 'bg-key-1' },
        body: JSON.stringify({ model: 'gpt-4o-mini', input: marker, background: true }),
      })
    const first = await send()
    const again = await send()
    expect((again.json as { id: string }).id).toBe((first.json as { id: string }).id)
    expect(again.headers['idempotent-replayed']).toBe('true')
    await eventually(() => upstream(marker).length === 1)
    expect(upstream(marker)).toHaveLength(1)
  })

  it('a background Idempotency-Key sent again with another body is refused 422, as on the plain path', async () => {
    const send = (input: string) =>
      call(`${fx.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': 'bg-key-reused' },
        body: JSON.stringify({ model: 'gpt-4o-mini', input, background: true }),
      })
    expect((await send('bg key first body')).status).toBe(200)
    const other = await send('bg key another body')
    expect(other.status).toBe(422)
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(other.json).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'Idempotency-Key' } })
    expect(upstream('bg key another body')).toHaveLength(0)
  })

  it('a bad starting_after and an id the gateway never made are refused clearly', async () => {
    const auth = { authorization: `Bearer ${KEY_A}` }
    const unknown = await call(`${fx.url}/v1/responses/resp_nothing`, { headers: auth })
    expect(unknown.status).toBe(404)
    const created = await call(`${fx.url}/v1/responses`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'bg bad query', background: true }),
    })
    const id = (created.json as { id: string }).id
    const bad = await call(`${fx.url}/v1/responses/${id}?stream=true&starting_after=-2`, { headers: auth })
    expect(bad.status).toBe(400)
    expect(bad.json).toMatchObject({ error: { param: 'starting_after' } })
  })

  it('every Response object and stream event sent above matches the published schema', () => {
    expect(tally.bodies).toBeGreaterThan(0)
    expect(tally.events).toBeGreaterThan(0)
    // Known quirks (docs/reference/schema-quirks.md): the upstream's own passthrough bytes, and `usage: null` in progress.
    const unknown = tally.violations.filter(
      (v) =>
        !QUIRKS.some(
          (q) =>
            q.path.test(v.path) && (q.where?.test(v.where) ?? true) && (!q.id.startsWith('upstream-') || v.case.includes('passthrough')),
        ),
    )
    expect(unknown).toEqual([])
  })
})
