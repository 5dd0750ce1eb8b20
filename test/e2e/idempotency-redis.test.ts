import { expect, it } from 'vitest'
import { chatBody } from '../support/bodies.js'
import { bearer } from '../support/fixture.js'
import { type GatewayProcess, startGatewayProcess, useProcessesOnRedis } from '../support/gateway-process.js'
import { call, eventually, sendThenAbort } from '../support/http.js'
import { describeWithRedis, keysMatching, REDIS_URL } from '../support/redis.js'

/** Every key this run writes starts with this; afterAll removes exactly those. */
const RUN = `mg-idem-${process.pid}-${Date.now().toString(36)}`
const KEY = 'sk-idem-owner'

await describeWithRedis('Idempotency-Key across gateway processes on one Redis', () => {
  const shared = useProcessesOnRedis(RUN)
  const start = (namespace: string, idempotency?: Record<string, unknown>) =>
    startGatewayProcess({
      redisUrl: REDIS_URL,
      namespace: `${RUN}-${namespace}`,
      upstreamUrl: shared.mock.url,
      apiKeys: [KEY],
      idempotency,
    })
  const upstreamCalls = (content: string) => shared.mock.requests.filter((r) => r.body.includes(content)).length
  const post = (gw: GatewayProcess, body: unknown, key: string) =>
    call(`${gw.url}/v1/chat/completions`, { headers: { ...bearer(KEY), 'idempotency-key': key }, body })

  it('sends one key to two processes at once: one upstream call, both answered with the same body', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('both'), start('both')])
    const body = chatBody('two processes at once', { mock: { delay_ms: 600 } })
    const [ra, rb] = await Promise.all([post(a, body, 'k-both'), post(b, body, 'k-both')])
    expect([ra.status, rb.status]).toEqual([200, 200])
    expect(rb.text).toBe(ra.text)
    expect(rb.headers['x-request-id']).toBe(ra.headers['x-request-id'])
    expect(upstreamCalls('two processes at once')).toBe(1)
    // The claim and the kept answer are one value under the owner's hash tag; the repeat served from it adds the
    // note that the call's answer was served again, once delivered.
    const values = await eventually(async () => {
      const keys = await keysMatching(shared.admin, `${RUN}-both*val:*`)
      return keys.length === 2 ? keys : undefined
    })
    expect(values.filter((key) => !/val:\{[0-9a-f]+\}:served:/.test(key))).toHaveLength(1)
  })

  it('replays on the other process a key whose call finished on the first', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('after'), start('after')])
    const body = chatBody('other process after')
    const first = await post(a, body, 'k-after')
    const again = await post(b, body, 'k-after')
    expect(again.text).toBe(first.text)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('other process after')).toBe(1)
  })

  it('answers 409 idempotency_in_flight with retry-after and x-should-retry once the wait bound passes', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('busy'), start('busy', { waitMs: 300 })])
    const body = chatBody('still running elsewhere', { mock: { delay_ms: 2500 } })
    const first = post(a, body, 'k-busy')
    await eventually(() => upstreamCalls('still running elsewhere') === 1)
    const busy = await post(b, body, 'k-busy')
    expect(busy.status).toBe(409)
    expect(busy.json.error.code).toBe('idempotency_in_flight')
    expect(busy.headers['retry-after']).toBe('1')
    expect(busy.headers['x-should-retry']).toBe('true')
    expect((await first).status).toBe(200)
    expect(upstreamCalls('still running elsewhere')).toBe(1)
  })

  it('an SDK retry landing on another process while the first attempt runs waits for it: one upstream call', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await Promise.all([start('sdk'), start('sdk')])
    const body = chatBody('sdk retry elsewhere', { mock: { delay_ms: 1200 } })
    // The first attempt's client gives up (an SDK timeout); its retry goes to the other process.
    await sendThenAbort(`${a.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY), 'x-stainless-retry-count': '0' },
      body: JSON.stringify(body),
      afterMs: 100,
    })
    // An SDK waits at least 0.4 s before it retries; here the retry is sent once the first attempt has said it runs.
    await eventually(async () => (await keysMatching(shared.admin, `${RUN}-sdk*run:*`)).length > 0)
    const retry = await call(`${b.url}/v1/chat/completions`, { headers: { ...bearer(KEY), 'x-stainless-retry-count': '1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json.choices[0].message.content).toEqual(expect.any(String))
    expect(upstreamCalls('sdk retry elsewhere')).toBe(1)
  })

  it('an SDK retry on another process answers 409 with x-should-retry when the first attempt outlasts the wait', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await Promise.all([start('sdk-busy'), start('sdk-busy', { waitMs: 300 })])
    const body = chatBody('sdk retry busy elsewhere', { mock: { delay_ms: 2000 } })
    await sendThenAbort(`${a.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY), 'x-stainless-retry-count': '0' },
      body: JSON.stringify(body),
      afterMs: 100,
    })
    await eventually(async () => (await keysMatching(shared.admin, `${RUN}-sdk-busy*run:*`)).length > 0)
    const busy = await call(`${b.url}/v1/chat/completions`, { headers: { ...bearer(KEY), 'x-stainless-retry-count': '1' }, body })
    expect(busy.status).toBe(409)
    expect(busy.headers['x-should-retry']).toBe('true')
    // The SDK comes back after retry-after; by then the answer is there.
    const later = await eventually(async () => {
      const res = await call(`${b.url}/v1/chat/completions`, { headers: { ...bearer(KEY), 'x-stainless-retry-count': '2' }, body })
      return res.status === 200 ? res : undefined
    }, 10_000)
    expect(later.headers['idempotent-replayed']).toBe('true')
    expect(upstreamCalls('sdk retry busy elsewhere')).toBe(1)
  })

  it('refuses the key with another body on the other process: 422', { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([start('reuse'), start('reuse')])
    await post(a, chatBody('reused key one'), 'k-reuse')
    const other = await post(b, chatBody('reused key two'), 'k-reuse')
    expect(other.status).toBe(422)
    expect(upstreamCalls('reused key two')).toBe(0)
  })
})
