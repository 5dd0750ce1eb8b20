import { expect, it } from 'vitest'
import { ownerId } from '../../src/index.js'
import { chatBody } from '../support/bodies.js'
import { bearer, KEY_A } from '../support/fixture.js'
import { startGatewayProcess, useProcessesOnRedis } from '../support/gateway-process.js'
import { call, eventually } from '../support/http.js'
import { freshMinute } from '../support/ledger.js'
import { describeWithRedis, keysMatching, REDIS_URL } from '../support/redis.js'

// Two gateway processes on one Redis: a check in one sees every call the other counted, exactly.
const RUN = `ledger-proc-${process.pid}-${Date.now()}`

await describeWithRedis('limits across two gateway processes', () => {
  const shared = useProcessesOnRedis(RUN)

  it('share one owner’s request counter: the limit holds across both, counted exactly once per call', async () => {
    await freshMinute()
    const settings = {
      redisUrl: REDIS_URL,
      namespace: RUN,
      upstreamUrl: shared.mock.url,
      apiKeys: [KEY_A],
      limits: { requestsPerMinute: 5 },
    }
    const [a, b] = await Promise.all([startGatewayProcess(settings), startGatewayProcess(settings)])
    const body = chatBody('counted across processes', { mock: { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } })
    // Concurrent calls from both processes: the script counts each exactly once.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(`${(i % 2 ? a : b).url}/v1/chat/completions`, { headers: bearer(KEY_A), body })),
    )
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5)
    const refused = answers.filter((r) => r.status === 429)
    expect(refused).toHaveLength(3)
    expect(refused[0]?.json.error.code).toBe('rate_limit_exceeded')
    const [key] = await keysMatching(shared.admin, `*${RUN}*ledger*`)
    expect(key).toContain(`{${ownerId({ apiKey: KEY_A })}}`)
    expect(await shared.admin.hGet(key as string, 'r')).toBe('5')
    await eventually(async () => (await shared.admin.hGet(key as string, 't')) === String(5 * 15))
    expect(a.stderr()).toBe('')
    expect(b.stderr()).toBe('')
  }, 60_000)
})
