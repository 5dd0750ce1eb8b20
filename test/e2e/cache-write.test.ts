import { afterAll, beforeAll, expect, it } from 'vitest'
import { type MockUpstream, startMockUpstream } from '../../src/testing/index.js'
import { KEY_A, UPSTREAM_KEY } from '../support/fixture.js'
import { type LedgerChain, startLedgerChain } from '../support/ledger.js'
import { describeWithRedis, recommendedKeyv } from '../support/redis.js'
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js'

// A miss's store write is nobody's wait: the client has its answer first, and a call that joined the miss is served
// the answer as soon as it is checked, while Redis has not yet confirmed the write.
const RUN = `cache-write-${process.pid}-${Date.now()}`

async function chat(url: string, content: string, delayMs = 0): Promise<{ cache: string | null; text: string }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_A}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], mock: { delay_ms: delayMs } }),
  })
  return { cache: res.headers.get('x-model-gateway-cache'), text: await res.text() }
}

await describeWithRedis('the response cache writes after the answer', () => {
  let mock: MockUpstream
  let relay: TcpRelay
  let chain: LedgerChain
  beforeAll(async () => {
    mock = await startMockUpstream({ apiKey: UPSTREAM_KEY })
    const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    relay = await startTcpRelay('redis', redis.hostname, Number(redis.port || 6379))
    chain = await startLedgerChain({ store: recommendedKeyv(RUN, relay.url), cache: { ttlMs: 60_000 } }, mock)
  })
  afterAll(async () => {
    relay.release()
    await chain.close()
    await relay.close()
    await mock.close()
  })

  it('a call joined to a miss gets the answer while the store has not yet confirmed the write', async () => {
    // Connected, and the miss's own lookup answered, before Redis's replies are held.
    expect((await chat(chain.url, 'warm the link')).cache).toBe('miss')
    const before = mock.requests.length
    // The first call waits at the upstream long enough for the second, identical one to join it.
    const first = chat(chain.url, 'joined while written', 600)
    while (mock.requests.length === before) await new Promise((resolve) => setImmediate(resolve))
    const second = chat(chain.url, 'joined while written', 600)
    relay.hold()
    const [a, b] = await Promise.all([first, second])
    // Both answered with Redis's reply to the write still held: no "could not be cached" after its timeout.
    expect(chain.warnings.filter((w) => w.message.includes('could not be cached'))).toEqual([])
    expect(a.cache).toBe('miss')
    expect(b.cache).toBe('hit')
    expect(b.text).toBe(a.text)
    expect(mock.requests.length - before).toBe(1)
    relay.release()
    // The write went through once Redis answered: a later call is served from it.
    expect((await chat(chain.url, 'joined while written', 600)).cache).toBe('hit')
  })
})
