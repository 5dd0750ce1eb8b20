import { randomUUID } from 'node:crypto'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRecoveriesClient, type RecoveriesClient } from '../../src/client/index.js'
import type { GatewayOptions } from '../../src/types.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, startFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeWithRedis, recommendedKeyv } from '../support/redis.js'
import { NODE_KINDS } from '../support/servers.js'

const CHAT = '/v1/chat/completions'
const SUMMARY_FIELDS = ['created_at', 'interrupted_reason', 'request_body_hash', 'request_id']

/** The scenarios, on a gateway whose store `store()` makes (undefined: the default in-memory store). */
function servedAgainSuite(store: () => GatewayOptions['store'] | undefined): void {
  let fx: Fixture
  let records: RecoveriesClient
  beforeAll(async () => {
    const keyv = store()
    fx = await startFixture(NODE_KINDS[0]!, keyv === undefined ? {} : { store: keyv })
    records = createRecoveriesClient({ baseUrl: fx.url, apiKey: KEY_A })
    await records.deleteAll({ dryRun: false })
  })
  afterAll(async () => {
    await records.deleteAll({ dryRun: false })
    await fx.close()
  })

  /** Sends a whole chat call with these headers and cuts it while the upstream works; resolves once its record is kept. */
  async function cutCall(body: Record<string, unknown>, headers: Record<string, string>): Promise<string> {
    const before = fx.mock.completedCalls
    await sendThenAbort(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), ...headers }, body: JSON.stringify(body), afterMs: 30 })
    await fx.mock.waitFor(() => fx.mock.completedCalls > before)
    const [kept] = await eventually(async () => {
      const found = await records.lookup(body)
      return found.length === 1 ? found : undefined
    })
    return kept!.request_id
  }

  it('a replay of an Idempotency-Key marks the record it served (served_again_at); an untouched record has none', async () => {
    const key = randomUUID()
    const body = chatBody(`keyed ${key}`, { mock: { delay_ms: 200 } })
    const id = await cutCall(body, { 'idempotency-key': key })
    const untouched = await cutCall(chatBody(`never repeated ${key}`, { mock: { delay_ms: 200 } }), {})
    expect((await records.get(id)).served_again_at).toBeUndefined()

    const before = Math.floor(Date.now() / 1000)
    const repeat = await call(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'idempotency-key': key }, body })
    expect(repeat.status).toBe(200)
    expect(repeat.headers['idempotent-replayed']).toBe('true')
    expect(repeat.headers['x-request-id']).toBe(id)

    const record = await eventually(async () => {
      const r = await records.get(id)
      return r.served_again_at === undefined ? undefined : r
    })
    expect(record.served_again_at).toBeGreaterThanOrEqual(before)
    expect(record.served_again_at).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000))
    expect(record.served_again_at).toBeGreaterThanOrEqual(record.created_at)
    // The first time counts: a second replay leaves it as it was.
    const first = record.served_again_at
    await call(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'idempotency-key': key }, body })
    expect((await records.get(id)).served_again_at).toBe(first)

    expect((await records.get(untouched)).served_again_at).toBeUndefined()
    // Summaries keep the service's four fields.
    const { items } = await records.list()
    for (const item of items) expect(Object.keys(item).sort()).toEqual(SUMMARY_FIELDS)
    for (const item of await records.lookup(body)) expect(Object.keys(item).sort()).toEqual(SUMMARY_FIELDS)
  })

  it("an SDK's retry (x-stainless-retry-count) served from the call's answer marks the record", async () => {
    const body = chatBody(`sdk retry ${randomUUID()}`, { mock: { delay_ms: 200 } })
    const id = await cutCall(body, { 'x-stainless-retry-count': '0' })
    const retry = await call(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'x-stainless-retry-count': '1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers['x-request-id']).toBe(id)
    const record = await eventually(async () => {
      const r = await records.get(id)
      return r.served_again_at === undefined ? undefined : r
    })
    expect(record.served_again_at).toEqual(expect.any(Number))
  })

  it('a resume of a cut stream delivered to its end marks its record', async () => {
    const key = randomUUID()
    const body = chatBody(`stream resumed ${key}`, { stream: true, mock: { chunks: 4, chunk_delay_ms: 40 } })
    const id = await cutCall(body, { 'idempotency-key': key })
    expect((await records.get(id)).served_again_at).toBeUndefined()
    const rest = await call(`${fx.url}/v1/recoveries/${id}/stream`, { method: 'GET', headers: { ...bearer(KEY_A), 'last-event-id': '1' } })
    expect(rest.status).toBe(200)
    expect(rest.text).toContain('[DONE]')
    await eventually(async () => (await records.get(id)).served_again_at !== undefined)
  })
}

describe('served_again_at on the in-memory store', () => {
  servedAgainSuite(() => undefined)

  it('the openai SDK timing out and retrying: the record of the call it joined says it was served again', async () => {
    const fx = await startFixture(NODE_KINDS[0]!)
    try {
      const records = createRecoveriesClient({ baseUrl: fx.url, apiKey: KEY_A })
      const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY_A, timeout: 500, maxRetries: 2 })
      const content = `sdk joins ${randomUUID()}`
      const completion = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content }],
        // @ts-expect-error steers the mock upstream: it answers after twice the SDK's timeout
        mock: { delay_ms: 1000 },
      })
      expect(completion.choices[0]?.message.content).toContain(content)
      const { items } = await eventually(async () => {
        const list = await records.list()
        return list.count === 1 ? list : undefined
      })
      const record = await eventually(async () => {
        const r = await records.get(items[0]!.request_id)
        return r.served_again_at === undefined ? undefined : r
      })
      expect(JSON.parse(record.response.body_raw).choices[0].message.content).toContain(content)
    } finally {
      await fx.close()
    }
  })
})

await describeWithRedis('served_again_at on Redis', () => {
  servedAgainSuite(() => recommendedKeyv(`served-again-${randomUUID()}`))
})
