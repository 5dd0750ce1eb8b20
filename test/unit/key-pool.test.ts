import { describe, expect, it } from 'vitest'
import type { UpstreamKey } from '../../src/config/resolve.js'
import type { KeySelection } from '../../src/types.js'
import { KeyPool } from '../../src/upstream/interceptors/key-pool.js'

const keys = (...weights: number[]): UpstreamKey[] => weights.map((weight, i) => ({ alias: `key-${i + 1}`, weight, headers: [] }))
const none = new Set<number>()

/** Picks `n` keys in a row, each started and left in flight. */
function pickAndHold(pool: KeyPool, n: number): number[] {
  const picked: number[] = []
  for (let i = 0; i < n; i++) {
    const index = pool.pick(none) as number
    pool.started(index)
    picked.push(index)
  }
  return picked
}

/** Picks `n` keys in a row, each call over before the next. */
function pickInTurn(pool: KeyPool, n: number): number[] {
  const picked: number[] = []
  for (let i = 0; i < n; i++) {
    const index = pool.pick(none) as number
    pool.started(index)
    pool.finished(index)
    picked.push(index)
  }
  return picked
}

describe('least-in-flight key selection', () => {
  const pool = (...weights: number[]) => new KeyPool(keys(...weights), 'least-in-flight')

  it('picks the key with the fewest calls in flight', () => {
    const p = pool(1, 1, 1)
    expect(pickAndHold(p, 3)).toEqual([0, 1, 2])
    p.finished(1)
    expect(p.pick(none)).toBe(1)
  })

  it('breaks a tie by weight: the heavier key first', () => {
    const p = pool(1, 3)
    expect(pickAndHold(p, 2)).toEqual([1, 0])
    // One call each in flight: a tie again, which the heavier key takes.
    expect(p.pick(none)).toBe(1)
  })

  it('breaks a full tie by the key picked longest ago, so idle keys take turns', () => {
    expect(pickInTurn(pool(1, 1, 1), 6)).toEqual([0, 1, 2, 0, 1, 2])
  })

  it('passes over a resting key even when it has fewer calls in flight', () => {
    const p = pool(1, 1)
    p.rest(0, 30_000)
    expect(pickAndHold(p, 3)).toEqual([1, 1, 1])
  })

  it('passes over keys this call tried, and ends when it tried them all', () => {
    const p = pool(1, 1, 1)
    expect(p.pick(new Set([0]))).toBe(1)
    expect(p.pick(new Set([0, 1, 2]))).toBeUndefined()
  })

  it('tries the key that wakes first when every untried key rests', () => {
    const p = pool(1, 1)
    p.rest(0, 30_000)
    p.rest(1, 5_000)
    expect(p.pick(none)).toBe(1)
  })
})

describe('round-robin key selection (the default)', () => {
  it('spreads calls by weight whatever is in flight', () => {
    const p = new KeyPool(keys(1, 2), 'round-robin' satisfies KeySelection)
    const picked = pickAndHold(p, 30)
    expect(picked.filter((i) => i === 0)).toHaveLength(10)
    expect(picked.filter((i) => i === 1)).toHaveLength(20)
  })
})
