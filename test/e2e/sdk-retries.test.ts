import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { OPENAI_SDKS } from '../support/sdks.js'
import { NODE_KINDS } from '../support/servers.js'

const node = NODE_KINDS[0]!
const CHAT = '/v1/chat/completions'

let fx: Fixture
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx = await startFixture(node, { onUsage: (u) => usage.push(u) })
})
afterAll(() => fx.close())

const upstreamCalls = (content: string) => fx.mock.requests.filter((r) => r.body.includes(content)).length
const recordCount = async (): Promise<number> => (await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })).json.count

describe.each(OPENAI_SDKS)('SDK retries with %s', (name, load) => {
  it('the SDK timing out and retrying (maxRetries 2) gets the answer from one upstream call, billed once', async () => {
    const OpenAI = await load()
    const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, timeout: 1000 })
    const content = `sdk retry scenario ${name}`
    const before = usage.length
    const recordsBefore = await recordCount()
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content }],
      // @ts-expect-error steers the mock upstream: it answers after 3 s, three times the SDK's timeout
      mock: { delay_ms: 3000 },
    })
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String))
    // The SDK made three attempts; the gateway made one upstream call.
    expect(upstreamCalls(content)).toBe(1)
    await eventually(() => usage.length > before)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(usage.slice(before)).toHaveLength(1)
    // At most one record: the first attempts' clients left before the answer, the last got it.
    expect((await recordCount()) - recordsBefore).toBeLessThanOrEqual(1)
  })
})

describe('SDK retries (x-stainless-retry-count)', () => {
  const post = (body: unknown, retry: number | undefined) =>
    call(`${fx.url}${CHAT}`, {
      headers: { ...bearer(KEY_A), ...(retry === undefined ? {} : { 'x-stainless-retry-count': String(retry) }) },
      body,
    })

  it('a retry whose own client left while joined does not stop the call for the first client', async () => {
    const body = chatBody('retry leaving joiner', { stream: true, mock: { chunks: 5, chunk_delay_ms: 50 } })
    const first = post(body, 0)
    await eventually(() => upstreamCalls('retry leaving joiner') === 1)
    await sendThenAbort(`${fx.url}${CHAT}`, {
      headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '1' },
      body: JSON.stringify(body),
      afterMs: 30,
    }).catch(() => {})
    const a = await first
    expect(a.text).toContain('data: [DONE]')
    expect(upstreamCalls('retry leaving joiner')).toBe(1)
  })

  it('a retry joins the same call still running: same body and request id, one upstream call', async () => {
    const body = chatBody('retry join', { mock: { delay_ms: 300 } })
    const first = post(body, 0)
    await eventually(() => upstreamCalls('retry join') === 1)
    const [a, b] = await Promise.all([first, post(body, 1)])
    expect(b.status).toBe(200)
    expect(b.text).toBe(a.text)
    expect(b.headers['x-request-id']).toBe(a.headers['x-request-id'])
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('retry join')).toBe(1)
  })

  it('a retry after the answer was delivered is served from memory (TCP cannot tell whether it was read)', async () => {
    const body = chatBody('retry recent')
    const a = await post(body, 0)
    const b = await post(body, 1)
    expect(b.text).toBe(a.text)
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('retry recent')).toBe(1)
  })

  it('a first attempt (count 0) with the same body is a new call, never a replay', async () => {
    const body = chatBody('retry count zero')
    await post(body, 0)
    const again = await post(body, 0)
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('retry count zero')).toBe(2)
  })

  it('a request without the header is never taken for a retry', async () => {
    const body = chatBody('retry no header')
    await post(body, undefined)
    await post(body, undefined)
    expect(upstreamCalls('retry no header')).toBe(2)
  })

  it('another model with the same messages is another call', async () => {
    await post(chatBody('retry other model'), 0)
    const other = await post({ ...chatBody('retry other model'), model: 'renamed' }, 1)
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('retry other model')).toBe(2)
  })
})

describe('SDK retries served from a recovery record', () => {
  let rfx: Fixture
  beforeAll(async () => {
    // Nothing stays in memory: a retry must find the record.
    rfx = await startFixture(node, { idempotency: { recentMs: 1 } })
  })
  afterAll(() => rfx.close())

  it('a retry after the first attempt was cut is answered from its record, within the retry window', async () => {
    const body = chatBody('retry from record', { mock: { delay_ms: 100 } })
    await sendThenAbort(`${rfx.url}${CHAT}`, {
      headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '0' },
      body: JSON.stringify(body),
      afterMs: 20,
    })
    const listed = await eventually(async () => {
      const list = await call(`${rfx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
      return JSON.stringify(list.json).includes('"request_id"') ? list.json : undefined
    })
    const retry = await call(`${rfx.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(JSON.stringify(listed)).toContain(String(retry.headers['x-request-id']))
    expect(rfx.mock.requests.filter((r) => r.body.includes('retry from record'))).toHaveLength(1)
  })

  it('with idempotency.sdkRetries false, a retry goes upstream again', async () => {
    const off = await startFixture(node, { idempotency: { sdkRetries: false } })
    try {
      const body = chatBody('retry switched off')
      await call(`${off.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '0' }, body })
      const again = await call(`${off.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '1' }, body })
      expect(again.headers['idempotent-replayed']).toBeUndefined()
      expect(off.mock.requests.filter((r) => r.body.includes('retry switched off'))).toHaveLength(2)
    } finally {
      await off.close()
    }
  })
})
