import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageEvent } from '../../src/types.js'
import { chatBody, geminiBody } from '../support/bodies.js'
import { bearer, type Fixture, KEY_A, KEY_B, startFixture } from '../support/fixture.js'
import { goog, gpath } from '../support/gemini.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

const node = NODE_KINDS[0]!
const CHAT = '/v1/chat/completions'

let fx: Fixture
const usage: UsageEvent[] = []
beforeAll(async () => {
  fx = await startFixture(node, { onUsage: (u) => usage.push(u), idempotency: { ttlMs: 1500 } })
})
afterAll(() => fx.close())

const upstreamCalls = (content: string) => fx.mock.requests.filter((r) => r.body.includes(content)).length
const post = (body: unknown, key: string | undefined, extra: Record<string, string> = {}) =>
  call(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), ...(key === undefined ? {} : { 'idempotency-key': key }), ...extra }, body })

describe('Idempotency-Key', () => {
  it('answers a repeated key from the kept answer: same body and request id, marked replayed, one upstream call', async () => {
    const body = chatBody('idem sequence')
    const first = await post(body, 'k-sequence')
    const second = await post(body, 'k-sequence')
    expect(first.status).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(second.status).toBe(200)
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(second.headers['x-request-id']).toBe(first.headers['x-request-id'])
    expect(upstreamCalls('idem sequence')).toBe(1)
    // A delivered keyed answer is kept for its key, but it is not an interrupted call.
    const list = await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
    expect(list.json.data ?? list.json).not.toContainEqual(expect.objectContaining({ request_id: first.headers['x-request-id'] }))
  })

  it('serves ten concurrent requests with one key from one upstream call, with ten identical bodies', async () => {
    const body = chatBody('idem concurrent', { mock: { delay_ms: 300 } })
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(body, 'k-concurrent')))
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
    expect(new Set(answers.map((a) => a.text)).size).toBe(1)
    expect(new Set(answers.map((a) => a.headers['x-request-id'])).size).toBe(1)
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(9)
    expect(upstreamCalls('idem concurrent')).toBe(1)
  })

  it('bills once: onUsage fires for the upstream call, never for a replay or a join', async () => {
    const before = usage.length
    const body = chatBody('idem billing', { mock: { delay_ms: 100 } })
    await Promise.all([post(body, 'k-billing'), post(body, 'k-billing')])
    await post(body, 'k-billing')
    await eventually(() => usage.length > before)
    expect(usage.slice(before).filter((u) => u.model === 'gpt-4o-mini')).toHaveLength(1)
  })

  it('refuses the same key with another body: 422 idempotency_key_reused, nothing sent upstream', async () => {
    await post(chatBody('idem reuse one'), 'k-reuse')
    const other = await post(chatBody('idem reuse two'), 'k-reuse')
    expect(other.status).toBe(422)
    expect(other.json.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' })
    expect(upstreamCalls('idem reuse two')).toBe(0)
  })

  it('scopes keys to the owner: another client with the same key is a new call', async () => {
    const body = chatBody('idem owners')
    await post(body, 'k-owner')
    const other = await call(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_B), 'idempotency-key': 'k-owner' }, body })
    expect(other.status).toBe(200)
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('idem owners')).toBe(2)
  })

  it('keeps nothing for a failed first attempt: the key goes upstream again', async () => {
    const failing = await post(chatBody('idem failed', { mock: { status: 500 } }), 'k-failed')
    expect(failing.status).toBe(500)
    const again = await post(chatBody('idem failed', { mock: { status: 500 } }), 'k-failed')
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('idem failed')).toBe(2)
  })

  it('forgets a key after idempotency.ttlMs', async () => {
    const body = chatBody('idem expiry')
    await post(body, 'k-expiry')
    await new Promise((resolve) => setTimeout(resolve, 1700))
    const later = await post(body, 'k-expiry')
    expect(later.headers['idempotent-replayed']).toBeUndefined()
    expect(upstreamCalls('idem expiry')).toBe(2)
  })

  it('accepts the key as a quoted structured-field string, the same key as unquoted', async () => {
    const body = chatBody('idem quoted')
    await post(body, 'k-"quoted"'.replace(/"/g, ''))
    const quoted = await post(body, '"k-quoted"')
    expect(quoted.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('idem quoted')).toBe(1)
  })

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'two words'],
    ['repeated', 'a, b'],
  ])('answers 400 for a key that is %s, before anything goes upstream', async (_name, key) => {
    const res = await post(chatBody(`idem invalid ${key.length}`), key)
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: 'idempotency_key_invalid', param: 'Idempotency-Key' })
    expect(upstreamCalls(`idem invalid ${key.length}`)).toBe(0)
  })

  it('accepts a key of 255 visible characters', async () => {
    const res = await post(chatBody('idem longest'), '~'.repeat(255))
    expect(res.status).toBe(200)
  })

  it('replays a completed keyed stream as the same SSE bytes', async () => {
    const body = chatBody('idem stream', { stream: true, mock: { chunks: 4 } })
    const first = await post(body, 'k-stream')
    const second = await post(body, 'k-stream')
    expect(first.text).toContain('data: [DONE]')
    expect(second.text).toBe(first.text)
    expect(second.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('idem stream')).toBe(1)
  })

  it('joins a running keyed stream: the joiner gets the events so far, then the live ones', async () => {
    const body = chatBody('idem live stream', { stream: true, mock: { chunks: 6, chunk_delay_ms: 60 } })
    const first = post(body, 'k-live')
    await eventually(() => upstreamCalls('idem live stream') === 1)
    await new Promise((resolve) => setTimeout(resolve, 150))
    const [a, b] = await Promise.all([first, post(body, 'k-live')])
    expect(b.text).toBe(a.text)
    expect(b.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('idem live stream')).toBe(1)
  })

  it('works for generate-content: a repeated key is replayed in the Gemini format', async () => {
    const body = geminiBody('idem gemini')
    const send = () => call(`${fx.url}${gpath(false)}`, { headers: { ...goog(KEY_A), 'idempotency-key': 'k-gemini' }, body })
    const first = await send()
    const second = await send()
    expect(first.json.candidates).toBeDefined()
    expect(second.text).toBe(first.text)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('idem gemini')).toBe(1)
  })

  it('keeps the answer for a key whose client left, and still writes the recovery record', async () => {
    const body = JSON.stringify(chatBody('idem gone', { mock: { delay_ms: 200 } }))
    await sendThenAbort(`${fx.url}${CHAT}`, { headers: { ...bearer(KEY_A), 'idempotency-key': 'k-gone' }, body, afterMs: 50 })
    const back = await eventually(async () => {
      const res = await post(JSON.parse(body), 'k-gone')
      return res.headers['idempotent-replayed'] === 'true' ? res : undefined
    })
    expect(back.status).toBe(200)
    expect(upstreamCalls('idem gone')).toBe(1)
    const list = await call(`${fx.url}/v1/recoveries`, { headers: bearer(KEY_A) })
    expect(JSON.stringify(list.json)).toContain(String(back.headers['x-request-id']))
  })
})
