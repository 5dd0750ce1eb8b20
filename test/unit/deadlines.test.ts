import { describe, expect, it } from 'vitest'
import { DeadlineSweeper } from '../../src/http/deadlines.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('DeadlineSweeper', () => {
  it('expires what was armed, in order, and nothing that was disarmed', async () => {
    const sweeper = new DeadlineSweeper(50)
    const expired: string[] = []
    sweeper.arm(() => expired.push('first'))
    const disarm = sweeper.arm(() => expired.push('disarmed'))
    sweeper.arm(() => expired.push('third'))
    disarm()
    await sleep(20)
    expect(expired).toEqual([])
    await sleep(120)
    expect(expired).toEqual(['first', 'third'])
  })

  it('arms again after going idle', async () => {
    const sweeper = new DeadlineSweeper(20)
    let count = 0
    sweeper.arm(() => count++)
    await sleep(80)
    sweeper.arm(() => count++)
    await sleep(80)
    expect(count).toBe(2)
  })
})
