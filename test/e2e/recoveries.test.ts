import Keyv from 'keyv'
import { afterEach, describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../src/json/hash.js'
import { chatBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, KEY_B, startFixture, useFixture } from '../support/fixture.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeMatrix, describeOnce, forwardedBody, NODE_KINDS } from '../support/servers.js'

const recoveriesOf = async (fx: Fixture, key = KEY_A) => (await call(`${fx.url}/v1/recoveries`, { headers: bearer(key) })).json

/** Sends a chat request that the client abandons while the upstream is still working. */
async function interrupted(fx: Fixture, body: Record<string, unknown>, key = KEY_A, text = JSON.stringify(body)) {
  const before = fx.mock.completedCalls
  await sendThenAbort(`${fx.url}/v1/chat/completions`, { headers: bearer(key), body: text, afterMs: 30 })
  await fx.mock.waitFor(() => fx.mock.completedCalls > before)
}

describeMatrix('recovery flow', (kind) => {
  const fx = useFixture(kind)
  afterEach(async () => {
    for (const key of [KEY_A, KEY_B]) await call(`${fx.url}/v1/recoveries?all=true`, { method: 'DELETE', headers: bearer(key) })
  })

  it('keeps exactly one record for a request whose client left, and returns it through list, lookup and detail', async () => {
    const body = chatBody('prove it', { temperature: 0.5, mock: { delay_ms: 300 } })
    const sent = JSON.stringify(body, null, 2)
    await interrupted(fx, body, KEY_A, sent)
    const list = await eventually(async () => {
      const l = await recoveriesOf(fx)
      return l.count === 1 ? l : undefined
    })
    expect(list.items).toHaveLength(1)
    const summary = list.items[0]
    expect(Object.keys(summary).sort()).toEqual(['created_at', 'interrupted_reason', 'request_body_hash', 'request_id'])
    expect(summary.interrupted_reason).toBe('context canceled')
    expect(summary.request_body_hash).toBe(requestBodyHash(body))
    expect(Math.abs(summary.created_at - Date.now() / 1000)).toBeLessThan(10)

    // Lookup with other key order and whitespace finds it.
    const reordered = `{ "mock":{"delay_ms":300},  "temperature":0.5,"messages":[{"content":"prove it","role":"user"}],"model":"gpt-4o-mini"}`
    const lookup = await call(`${fx.url}/v1/recoveries/lookup`, {
      headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
      body: reordered,
    })
    expect(lookup.status).toBe(200)
    expect(lookup.json).toEqual({ items: [summary] })

    const detail = await call(`${fx.url}/v1/recoveries/${summary.request_id}`, { headers: bearer(KEY_A) })
    expect(detail.status).toBe(200)
    expect(detail.json.request_id).toBe(summary.request_id)
    expect(detail.json.request.body_raw).toBe(forwardedBody(kind, sent))
    expect(JSON.parse(detail.json.request.body_raw)).toEqual(body)
    expect(detail.json.request.request_body_hash).toBe(summary.request_body_hash)
    const completion = JSON.parse(detail.json.response.body_raw)
    expect(completion.object).toBe('chat.completion')
    expect(completion.choices[0].message.content).toContain('prove it')
    expect(detail.json.response.response_body_size).toBe(Buffer.byteLength(detail.json.response.body_raw, 'utf8'))
    expect(fx.mock.completedCalls).toBeGreaterThan(0)
  })

  it('writes nothing for a delivered response', async () => {
    const res = await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody('delivered') })
    expect(res.status).toBe(200)
    expect((await recoveriesOf(fx)).count).toBe(0)
  })

  it('writes nothing for a stream whose client left, and aborts its upstream call', async () => {
    const aborted = fx.mock.abortedStreams
    await sendThenAbort(`${fx.url}/v1/chat/completions`, {
      headers: bearer(KEY_A),
      body: JSON.stringify(chatBody('s', { stream: true, mock: { chunks: 50, chunk_delay_ms: 50, delay_ms: 100 } })),
      afterMs: 30,
    }).catch(() => {})
    await fx.mock.waitFor(() => fx.mock.abortedStreams > aborted)
    expect((await recoveriesOf(fx)).count).toBe(0)
  })

  it('writes nothing when the upstream answered with an error', async () => {
    await interrupted(fx, chatBody('x', { mock: { delay_ms: 200, status: 500 } }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await recoveriesOf(fx)).count).toBe(0)
  })

  it('deletes one record, then answers not found', async () => {
    await interrupted(fx, chatBody('delete me', { mock: { delay_ms: 200 } }))
    const { items } = await eventually(async () => ((await recoveriesOf(fx)).count === 1 ? recoveriesOf(fx) : undefined))
    const id = items[0].request_id
    const first = await call(`${fx.url}/v1/recoveries/${id}`, { method: 'DELETE', headers: bearer(KEY_A) })
    expect(first.status).toBe(200)
    expect(first.json).toEqual({ request_id: id, deleted: true, message: expect.any(String), reason: 'OK' })
    const again = await call(`${fx.url}/v1/recoveries/${id}`, { method: 'DELETE', headers: bearer(KEY_A) })
    expect(again.status).toBe(404)
    expect(again.json).toEqual({ request_id: id, deleted: false, message: expect.any(String), reason: 'RECOVERY_NOT_FOUND' })
    const detail = await call(`${fx.url}/v1/recoveries/${id}`, { headers: bearer(KEY_A) })
    expect(detail.status).toBe(404)
    expect(detail.json).toEqual({ request_id: id, message: expect.any(String), reason: 'RECOVERY_NOT_FOUND' })
  })

  it('delete-all needs all=true, can dry-run, and deletes only the caller’s records', async () => {
    await Promise.all([1, 2, 3].map((i) => interrupted(fx, chatBody(`a${i}`, { mock: { delay_ms: 200 } }))))
    await interrupted(fx, chatBody('b', { mock: { delay_ms: 200 } }), KEY_B)
    await eventually(async () => (await recoveriesOf(fx)).count === 3 && (await recoveriesOf(fx, KEY_B)).count === 1)
    const list = await recoveriesOf(fx)
    const ids = list.items.map((i: { request_id: string }) => i.request_id)
    expect([...ids].sort().reverse()).toEqual(ids)

    const unconfirmed = await call(`${fx.url}/v1/recoveries`, { method: 'DELETE', headers: bearer(KEY_A) })
    expect(unconfirmed.status).toBe(400)
    expect(unconfirmed.json).toEqual({ deleted: 0, message: expect.any(String), reason: 'CONFIRMATION_REQUIRED' })
    const dry = await call(`${fx.url}/v1/recoveries?all=true&dry_run=true`, { method: 'DELETE', headers: bearer(KEY_A) })
    expect(dry.status).toBe(200)
    expect(dry.json).toEqual({ deleted: 0, would_delete: 3, message: expect.any(String), reason: 'DRY_RUN' })
    expect((await recoveriesOf(fx)).count).toBe(3)
    const real = await call(`${fx.url}/v1/recoveries?all=true`, { method: 'DELETE', headers: bearer(KEY_A) })
    expect(real.status).toBe(200)
    expect(real.json).toEqual({ deleted: 3, message: expect.any(String), reason: 'OK' })
    expect((await recoveriesOf(fx)).count).toBe(0)
    expect((await recoveriesOf(fx, KEY_B)).count).toBe(1)
  })

  it('keeps records private to their owner', async () => {
    const body = chatBody('secret', { mock: { delay_ms: 200 } })
    await interrupted(fx, body)
    const { items } = await eventually(async () => ((await recoveriesOf(fx)).count === 1 ? recoveriesOf(fx) : undefined))
    const id = items[0].request_id
    const asB = bearer(KEY_B)
    expect(await recoveriesOf(fx, KEY_B)).toEqual({ count: 0, items: [] })
    expect((await call(`${fx.url}/v1/recoveries/lookup`, { headers: asB, body })).json).toEqual({ items: [] })
    expect((await call(`${fx.url}/v1/recoveries/${id}`, { headers: asB })).status).toBe(404)
    expect((await call(`${fx.url}/v1/recoveries/${id}`, { method: 'DELETE', headers: asB })).status).toBe(404)
    expect((await call(`${fx.url}/v1/recoveries?all=true`, { method: 'DELETE', headers: asB })).json.deleted).toBe(0)
    expect((await recoveriesOf(fx)).count).toBe(1)
  })

  it('answers lookup with no match as an empty list, and rejects bodies that are not a JSON object', async () => {
    const none = await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body: chatBody('never sent') })
    expect(none.status).toBe(200)
    expect(none.json).toEqual({ items: [] })
    for (const body of ['[1]', '{"a":', '3']) {
      const res = await call(`${fx.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
      expect(res.status).toBe(400)
    }
    const wrongType = await call(`${fx.url}/v1/recoveries/lookup`, {
      headers: { ...bearer(KEY_A), 'content-type': 'text/plain' },
      body: '{}',
    })
    expect(wrongType.status).toBe(415)
  })

  it.each([['a%2Fb'], ['a/b'], ['*'], ['x:y'], ['idx:0123'], ['Z'.repeat(10_000)]])(
    'answers 404 for the request id %s without touching other records',
    async (id) => {
      const detail = await call(`${fx.url}/v1/recoveries/${id}`, { headers: bearer(KEY_A) })
      expect(detail.status).toBe(404)
      expect(detail.json.reason).toBe('RECOVERY_NOT_FOUND')
      const del = await call(`${fx.url}/v1/recoveries/${id}`, { method: 'DELETE', headers: bearer(KEY_A) })
      expect(del.status).toBe(404)
      expect(del.json.deleted).toBe(false)
    },
  )
})

describeOnce('recovery flow', (kind) => {
  const fx = useFixture(kind)

  it('requires a key on every recoveries endpoint', async () => {
    for (const [method, path] of [
      ['GET', '/v1/recoveries'],
      ['DELETE', '/v1/recoveries?all=true'],
      ['POST', '/v1/recoveries/lookup'],
      ['GET', '/v1/recoveries/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ]) {
      const res = await call(`${fx.url}${path}`, { method: method as string, body: method === 'POST' ? {} : undefined })
      expect(res.status).toBe(401)
      expect(res.json.error.code).toBe('invalid_api_key')
    }
  })
})

describe('recovery retention and size', () => {
  const kind = NODE_KINDS[0]!

  it('a record past its TTL is gone from list, lookup and detail', async () => {
    const fx = await startFixture(kind, { recovery: { ttlMs: 500 } })
    try {
      const body = chatBody('short lived', { mock: { delay_ms: 100 } })
      await interrupted(fx, body)
      const { items } = await eventually(async () => ((await recoveriesOf(fx)).count === 1 ? recoveriesOf(fx) : undefined))
      await new Promise((resolve) => setTimeout(resolve, 600))
      expect(await recoveriesOf(fx)).toEqual({ count: 0, items: [] })
      expect((await call(`${fx.url}/v1/recoveries/lookup`, { headers: bearer(KEY_A), body })).json).toEqual({ items: [] })
      expect((await call(`${fx.url}/v1/recoveries/${items[0].request_id}`, { headers: bearer(KEY_A) })).status).toBe(404)
    } finally {
      await fx.close()
    }
  })

  it('stores a request body above 20 MB as omitted, keeps the response, and lookup still finds it', async () => {
    const fx = await startFixture(kind)
    try {
      const body = chatBody('y'.repeat(21 * 1024 * 1024), { mock: { delay_ms: 300, content: 'short answer' } })
      const text = JSON.stringify(body)
      await interrupted(fx, body, KEY_A, text)
      expect(fx.mock.requests.at(-1)!.body.length).toBe(text.length)
      const { items } = await eventually(async () => ((await recoveriesOf(fx)).count === 1 ? recoveriesOf(fx) : undefined), 10_000)
      const detail = (await call(`${fx.url}/v1/recoveries/${items[0].request_id}`, { headers: bearer(KEY_A) })).json
      expect(detail.request.body_raw).toBe('__OMITTED_TOO_LARGE__')
      expect(JSON.parse(detail.response.body_raw).choices[0].message.content).toBe('short answer')
      const lookup = await call(`${fx.url}/v1/recoveries/lookup`, {
        headers: { ...bearer(KEY_A), 'content-type': 'application/json' },
        body: text,
      })
      expect(lookup.json.items.map((i: { request_id: string }) => i.request_id)).toEqual([items[0].request_id])
    } finally {
      await fx.close()
    }
  })

  it('writes nothing to the store on the happy path', async () => {
    const map = new Map()
    const fx = await startFixture(kind, { store: new Keyv({ store: map }) })
    try {
      for (let i = 0; i < 3; i++)
        expect((await call(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: chatBody() })).status).toBe(200)
      expect(map.size).toBe(0)
    } finally {
      await fx.close()
    }
  })

  it('close() waits for a disconnected request still waiting upstream, and its record is written', async () => {
    const keyv = new Keyv({ store: new Map() })
    const fx = await startFixture(kind, { store: keyv })
    const body = chatBody('at shutdown', { mock: { delay_ms: 400 } })
    await sendThenAbort(`${fx.url}/v1/chat/completions`, { headers: bearer(KEY_A), body: JSON.stringify(body), afterMs: 20 })
    expect(fx.mock.completedCalls).toBe(0)
    await fx.gateway.close()
    expect(fx.mock.completedCalls).toBe(1)
    await fx.close()
    const again = await startFixture(kind, { store: keyv })
    try {
      const list = await recoveriesOf(again)
      expect(list.count).toBe(1)
      expect(list.items[0].request_body_hash).toBe(requestBodyHash(body))
    } finally {
      await again.close()
    }
  })
})
