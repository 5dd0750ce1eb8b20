import OpenAI from 'openai'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { type LedgerChain, startLedgerChain } from '../support/ledger.js'
import { type AdminClient, connectAdmin, describeWithRedis, dropKeys, keysMatching, recommendedKeyv } from '../support/redis.js'

// Two gateways on one Redis share the cache: what one stored, the other serves, in any framing; the answers live
// under the store's prefix with their TTL, and a delete through either removes them for both.
const RUN = `cache-${process.pid}-${Date.now()}`

await describeWithRedis('the response cache on Redis', () => {
  let mock: MockUpstream
  let a: LedgerChain
  let b: LedgerChain
  let admin: AdminClient
  beforeAll(async () => {
    mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
    a = await startLedgerChain({ store: recommendedKeyv(RUN), cache: { ttlMs: 60_000 } }, mock)
    b = await startLedgerChain({ store: recommendedKeyv(RUN), cache: { ttlMs: 60_000 } }, mock)
    admin = await connectAdmin()
  })
  afterAll(async () => {
    await a.close()
    await b.close()
    await dropKeys(admin, `${RUN}*`)
    admin.destroy()
    await mock.close()
  })

  it('one gateway stores, the other serves the same answer, whole and streamed, with no upstream call', async () => {
    const sdkA = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const sdkB = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'shared by processes' }] }
    const before = mock.requests.length
    const first = await sdkA.chat.completions.create(body)
    const { data, response } = await sdkB.chat.completions.create(body).withResponse()
    expect(response.headers.get('x-model-gateway-cache')).toBe('hit')
    expect(data).toEqual(first)
    let text = ''
    for await (const chunk of await sdkB.chat.completions.create({ ...body, stream: true })) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe(first.choices[0]?.message.content)
    expect(mock.requests.length - before).toBe(1)

    const kept = await keysMatching(admin, `${RUN}*cache:*`)
    expect(kept.length).toBeGreaterThanOrEqual(1)
    const ttl = await admin.pTTL(kept[0] as string)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('a delete through one gateway removes the answer for both', async () => {
    const sdkA = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const sdkB = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: KEY_A, maxRetries: 0 })
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'deleted across processes' }] }
    await sdkA.chat.completions.create(body)
    expect(await b.gateway.cache.delete({ owner: ownerId({ apiKey: KEY_A }) })).toBeGreaterThanOrEqual(1)
    const { response } = await sdkB.chat.completions.create(body).withResponse()
    expect(response.headers.get('x-model-gateway-cache')).toBe('miss')
  })
})
