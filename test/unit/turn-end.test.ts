import { describe, expect, it } from 'vitest'
import { turnEnd } from '../../src/http/turn-end.js'

// Answers held to the end of the loop turn: every wait of one turn resumes together, in the turn's check phase, and a
// wait begun while they resume is not lost.

describe('turnEnd', () => {
  it('resumes every wait of a turn together, before an immediate queued after them', async () => {
    const order: string[] = []
    await new Promise<void>((done) => {
      const waits = [1, 2, 3].map((n) => turnEnd().then(() => order.push(`wait ${n}`)))
      // Queued after the waits: an immediate of the same turn runs after they all resumed.
      setImmediate(() => order.push('immediate'))
      void Promise.all(waits).then(() => setImmediate(done))
    })
    expect(order).toEqual(['wait 1', 'wait 2', 'wait 3', 'immediate'])
  })

  it('puts a wait begun while the others resume into the next turn', async () => {
    const order: string[] = []
    await turnEnd().then(() => {
      order.push('first')
      void turnEnd().then(() => order.push('next turn'))
      setImmediate(() => order.push('immediate queued meanwhile'))
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(order).toEqual(['first', 'next turn', 'immediate queued meanwhile'])
  })
})
