import { randomUUID } from 'node:crypto'
import { createKeyv } from '@keyv/redis'
import { afterAll, describe, expect, it } from 'vitest'
import { usd } from '../../src/console/api.js'
import { consoleAssets } from '../../src/console/assets.js'
import { MemoryDailyUsage, RedisDailyUsage } from '../../src/console/daily-usage.js'
import { resolveConsole } from '../../src/console/options.js'
import { sse } from '../../src/dialects/framing/index.js'
import { DEFAULT_DIALECT } from '../../src/dialects/index.js'
import { DAY_MS } from '../../src/ledger/counters.js'
import { describeWithRedis, REDIS_URL } from '../support/redis.js'

describe('console options', () => {
  it('is off unless set; {} is on with the defaults', () => {
    expect(resolveConsole(undefined)).toBeUndefined()
    expect(resolveConsole({})).toEqual({ path: '/console', adminKeys: new Set(), usageDays: 30 })
    expect(resolveConsole({ path: '/ops/console', adminKeys: ['admin-key-1'], usageDays: 7 })).toEqual({
      path: '/ops/console',
      adminKeys: new Set(['admin-key-1']),
      usageDays: 7,
    })
  })

  it.each([
    [{ path: 'console' }, /console.path must be a path/],
    [{ path: '/console/' }, /console.path must be a path/],
    [{ path: '/a/../b' }, /console.path must be a path/],
    [{ path: '/con sole' }, /console.path must be a path/],
    [{ path: '/v1/console' }, /must not lie under the gateway's API paths/],
    [{ adminKeys: 'k' }, /adminKeys must be an array/],
    [{ adminKeys: ['short'] }, /8 characters or more/],
    [{ usageDays: 0 }, /usageDays must be a whole number of days from 1 to 366/],
    [{ usageDays: 367 }, /usageDays/],
    [{ usageDays: 1.5 }, /usageDays/],
    [{ pth: '/x' }, /console.pth is not an option; did you mean `path`/],
    ['on', /console must be an object/],
  ])('refuses %j', (value, message) => {
    expect(() => resolveConsole(value)).toThrow(message)
  })
})

describe('money', () => {
  it('is exact, with at least two decimals', () => {
    expect(usd(0)).toBe('0.00')
    expect(usd(5_000_000_000)).toBe('5.00')
    expect(usd(5_400)).toBe('0.0000054')
    expect(usd(1_234_567_891)).toBe('1.234567891')
    expect(usd(10_100_000_000)).toBe('10.10')
  })
})

describe('per-day usage in memory', () => {
  it('adds by UTC day, keeps usageDays days, and lists the owners with use in them', async () => {
    let now = Date.UTC(2026, 10, 1, 23, 59)
    const usage = new MemoryDailyUsage(2, () => now)
    usage.add('a', 10, 100)
    usage.add('a', 5, 50)
    now += 2 * 60_000 // the next UTC day
    usage.add('a', 1, 1)
    usage.add('b', 0, 0)
    expect(await usage.days('a')).toEqual([
      { day: '2026-11-01', requests: 2, tokens: 15, cost: 150 },
      { day: '2026-11-02', requests: 1, tokens: 1, cost: 1 },
    ])
    expect(await usage.owners()).toEqual(['a', 'b'])
    now += DAY_MS // the first day is past the two kept
    expect(await usage.days('a')).toEqual([{ day: '2026-11-02', requests: 1, tokens: 1, cost: 1 }])
    now += DAY_MS
    expect(await usage.days('a')).toEqual([])
    expect(await usage.owners()).toEqual([])
  })
})

await describeWithRedis('per-day usage in Redis', () => {
  // Two connections, as two gateway processes have.
  const namespace = `console-${randomUUID()}`
  const keyvs = [createKeyv(REDIS_URL, { namespace }), createKeyv(REDIS_URL, { namespace })]
  afterAll(async () => {
    await keyvs[0]?.clear()
    await Promise.all(keyvs.map((keyv) => keyv.disconnect()))
  })

  it('adds atomically from two instances (two processes), and lists every owner', async () => {
    const errors: unknown[] = []
    const [one, two] = keyvs.map((keyv) => new RedisDailyUsage(keyv, 30, (error) => errors.push(error))) as [
      RedisDailyUsage,
      RedisDailyUsage,
    ]
    for (let i = 0; i < 20; i++) (i % 2 ? one : two).add('owner-a', 3, 7)
    two.add('owner-b', 1, 1)
    const today = new Date().toISOString().slice(0, 10)
    await expect.poll(() => one.days('owner-a')).toEqual([{ day: today, requests: 20, tokens: 60, cost: 140 }])
    expect((await two.owners()).sort()).toEqual(['owner-a', 'owner-b'])
    expect(errors).toEqual([])
  })
})

describe('the page script', () => {
  it("sends the key as the default dialect reads it and asks for its event stream, from the registry's values", () => {
    const key = DEFAULT_DIALECT.keyHeader
    expect(key).toBeDefined()
    const { name, prefix } = key as { name: string; prefix: string }
    // What the page writes is what the gateway reads back.
    expect(DEFAULT_DIALECT.clientKey({ [name]: `${prefix}sk-console-1` }, new URLSearchParams())).toBe('sk-console-1')
    const { js } = consoleAssets('/console')
    expect(js).toContain(`var KEY_HEADER = ${JSON.stringify(name)}\n`)
    expect(js).toContain(`var KEY_PREFIX = ${JSON.stringify(prefix)}\n`)
    expect(js).toContain(`var EVENT_STREAM = ${JSON.stringify(sse.contentType)}\n`)
    // The script runs: its wire values are declared ahead of the parts that use them.
    expect(() => new Function(js)).not.toThrow()
  })
})
