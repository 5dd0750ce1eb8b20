import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeadlineSweeper } from '../../src/http/deadlines.js'

// The sweeper's clock is Date.now and its tick an interval: fake timers move both, so no test waits on a busy machine.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('DeadlineSweeper', () => {
  it('expires what was armed, in order, and nothing that was disarmed', () => {
    const sweeper = new DeadlineSweeper(50)
    const expired: string[] = []
    sweeper.arm(() => expired.push('first'))
    const disarm = sweeper.arm(() => expired.push('disarmed'))
    sweeper.arm(() => expired.push('third'))
    disarm()
    vi.advanceTimersByTime(20)
    expect(expired).toEqual([])
    vi.advanceTimersByTime(120)
    expect(expired).toEqual(['first', 'third'])
  })

  it('arms again after going idle', () => {
    const sweeper = new DeadlineSweeper(20)
    let count = 0
    sweeper.arm(() => count++)
    vi.advanceTimersByTime(80)
    sweeper.arm(() => count++)
    vi.advanceTimersByTime(80)
    expect(count).toBe(2)
  })

  it('unlinks from anywhere in the list, ignores a second disarm or one after the expiry, and lets an expiry arm anew', () => {
    const sweeper = new DeadlineSweeper(50)
    const expired: string[] = []
    const disarms = ['a', 'b', 'c', 'd', 'e'].map((name) => sweeper.arm(() => expired.push(name)))
    // The head, one in the middle and the tail, one of them twice.
    disarms[0]!()
    disarms[2]!()
    disarms[4]!()
    disarms[2]!()
    sweeper.arm(() => {
      expired.push('f')
      sweeper.arm(() => expired.push('armed by f'))
    })
    vi.advanceTimersByTime(60)
    expect(expired).toEqual(['b', 'd', 'f'])
    // After the expiry: nothing to unlink, and the entries armed later are untouched.
    disarms[1]!()
    vi.advanceTimersByTime(60)
    expect(expired).toEqual(['b', 'd', 'f', 'armed by f'])
  })
})
