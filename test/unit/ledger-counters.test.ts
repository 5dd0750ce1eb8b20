import { describe, expect, it } from 'vitest'
import { DAY_MS, MemoryCounters, MINUTE_MS } from '../../src/ledger/counters.js'

// The windows of the in-process counters, on a clock the test moves (the end-to-end tests cannot wait a minute).
const NONE = { requests: -1, tokens: -1, cost: -1 }

describe('memory counters', () => {
  it('start the minute anew for requests and tokens, and the UTC day anew for cost', async () => {
    let now = 10 * DAY_MS + 5 * MINUTE_MS + 1_000
    const counters = new MemoryCounters(() => now)
    const limits = { requests: 2, tokens: 100, cost: 1_000 }
    expect((await counters.check('o', limits)).over).toBeUndefined()
    expect((await counters.check('o', limits)).over).toBeUndefined()
    const third = await counters.check('o', limits)
    expect(third).toMatchObject({ over: 'requests', requests: 2, minuteResetMs: MINUTE_MS - 1_000 })
    await counters.charge('o', 150, 400)
    now += MINUTE_MS
    // A new minute: requests free again, the tokens with them; the cost is the day's.
    expect(await counters.usage('o')).toEqual({ requests: 0, tokens: 0, cost: 400 })
    await counters.charge('o', 0, 700)
    const overBudget = await counters.check('o', limits)
    expect(overBudget).toMatchObject({ over: 'cost', cost: 1_100, dayResetMs: DAY_MS - 6 * MINUTE_MS - 1_000 })
    now = 11 * DAY_MS
    expect((await counters.check('o', limits)).over).toBeUndefined()
    expect(await counters.usage('o')).toEqual({ requests: 1, tokens: 0, cost: 0 })
  })

  it('checks tokens against what was used, so the call that crosses the limit still went', async () => {
    const counters = new MemoryCounters(() => 0)
    const limits = { ...NONE, tokens: 100 }
    expect((await counters.check('o', limits)).over).toBeUndefined()
    await counters.charge('o', 250, 0)
    expect(await counters.check('o', limits)).toMatchObject({ over: 'tokens', tokens: 250, requests: 1 })
  })

  it('keeps owners apart, and no limit is no limit', async () => {
    const counters = new MemoryCounters(() => 0)
    for (let i = 0; i < 50; i++) expect((await counters.check('a', NONE)).over).toBeUndefined()
    expect((await counters.check('b', { ...NONE, requests: 1 })).over).toBeUndefined()
    expect((await counters.check('b', { ...NONE, requests: 1 })).over).toBe('requests')
    expect(await counters.usage('a')).toMatchObject({ requests: 50 })
    expect(await counters.usage('nobody')).toEqual({ requests: 0, tokens: 0, cost: 0 })
  })
})
