import { describe, expect, it } from 'vitest'
import { SCAN_FROM_BYTES } from '../../src/http/read-body.js'
import { hashesInWorker } from '../../src/json/hash-worker.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A, KEY_B, useFixture } from '../support/fixture.js'
import { call, eventually } from '../support/http.js'
import { NODE_KINDS } from '../support/servers.js'

describe('the hash worker serves owners in turn', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])

  it('answers another owner’s keyed call while a lookup of 32 MiB of {} is being hashed', async () => {
    const order: string[] = []
    const huge = `{"model":"gpt-4o-mini","messages":[${'{},'.repeat((32 * 1024 * 1024) / 3)}{}]}`
    const lookup = call(`${fx.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: huge })
    const looked = lookup.then((res) => {
      order.push('lookup')
      return res
    })
    // A's body is read and scanned, and its hash is in the worker, before B's call is sent.
    await eventually(() => hashesInWorker() > 0 || order.length > 0, 20_000)
    // Over 1 MiB, so B's body is hashed on the worker too; keyed, so its call waits for the hash.
    const keyed = await call(`${fx.url}/v1/chat/completions`, {
      headers: { ...bearer(KEY_B), 'idempotency-key': 'fair-hash-1' },
      body: chatBody('x'.repeat(1_200_000)),
    })
    order.push('keyed')
    expect(keyed.status).toBe(200)
    expect((await looked).status).toBe(200)
    expect(order).toEqual(['keyed', 'lookup'])
  })

  it('answers a small request before either of two lookups of 16 MiB of small objects sent just before it', async () => {
    const messages = Array.from({ length: 400_000 }, (_, i) => `{"role":"user","content":"m${i % 97}","n":${i}}`)
    const body = Buffer.from(`{"model":"gpt-4o-mini","messages":[${messages.join(',')}]}`)
    const order: string[] = []
    const lookup = (key: string, tag: string) =>
      call(`${fx.url}/v1/recoveries/lookup`, { headers: { ...bearer(key), 'content-type': 'application/json' }, body }).then((res) => {
        order.push(tag)
        return res
      })
    const lookups = [lookup(KEY_A, 'a'), lookup(KEY_B, 'b')]
    // One body arrived, was scanned and is being hashed; the other is still read or scanned on the loop.
    await eventually(() => hashesInWorker() > 0 || order.length > 0, 20_000)
    expect((await call(`${fx.url}/v1/models`, { headers: bearer(KEY_A) })).status).toBe(200)
    order.push('probe')
    for (const res of await Promise.all(lookups)) expect(res.status).toBe(200)
    expect(order[0]).toBe('probe')
  })
})

describe('a body under 1 MiB nested 990 deep', () => {
  const fx = useFixture(NODE_KINDS[0] as (typeof NODE_KINDS)[number])
  const chain = `${'['.repeat(989)}${']'.repeat(989)}`
  // The nesting is inside a tool's parameters, where the upstream takes any JSON: 995 levels in all.
  const head =
    '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","x":['
  const count = Math.floor((SCAN_FROM_BYTES - head.length - 100) / (chain.length + 1))
  const body = `${head}${Array(count).fill(chain).join(',')}]}}}]}`

  it('is forwarded as sent, and its Idempotency-Key repeat is answered from the first call by the hash of its bytes', async () => {
    const headers = { ...bearer(KEY_A), 'content-type': 'application/json', 'idempotency-key': 'deep-1' }
    const first = await call(`${fx.url}/v1/chat/completions`, { headers, body })
    expect(first.status).toBe(200)
    expect(fx.mock.requests.at(-1)?.body).toBe(body)
    const upstreamCalls = fx.mock.requests.length
    const repeat = await call(`${fx.url}/v1/chat/completions`, { headers, body })
    expect(repeat.status).toBe(200)
    expect(repeat.json.id).toBe(first.json.id)
    expect(fx.mock.requests.length).toBe(upstreamCalls)
    const lookup = await call(`${fx.url}/v1/recoveries/lookup`, { headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body })
    expect(lookup.status).toBe(200)
  })
})
