import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { GatewayError, isGatewayError } from '../../src/errors.js'
import { DeadlineSweeper } from '../../src/http/deadlines.js'
import { guardedBy, outcomeUnknown } from '../../src/store/guard.js'

// Fake timers move the sweeper's clock and tick: no test waits on a busy machine.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('guardedBy (a store operation on a shared deadline sweeper)', () => {
  it('fails a step that never answers with store_unavailable once the sweeper’s deadline passes, as an unknown outcome', async () => {
    const sweeper = new DeadlineSweeper(2000)
    let late: (value: string) => void = () => {}
    const step = guardedBy(sweeper, 'ledger check', () => new Promise<string>((resolve) => (late = resolve)))
    const outcome = step.then(
      () => 'answered',
      (error: unknown) => error,
    )
    await vi.advanceTimersByTimeAsync(1900)
    late('too late')
    // Answered before its deadline: the answer stands.
    expect(await outcome).toBe('answered')

    const stuck = guardedBy(sweeper, 'ledger check', () => new Promise<string>(() => {}))
    const failed = stuck.then(
      () => undefined,
      (error: unknown) => error,
    )
    await vi.advanceTimersByTimeAsync(1999)
    let settled = false
    void failed.then(() => (settled = true))
    await Promise.resolve()
    expect(settled).toBe(false)
    // Late by at most the sweeper's tick (a tenth of the deadline).
    await vi.advanceTimersByTimeAsync(250)
    const error = await failed
    expect(isGatewayError(error) && error.code).toBe('store_unavailable')
    expect(outcomeUnknown(error)).toBe(true)
    expect(String((error as Error).message)).toMatch(/did not answer within 2000 ms \(ledger check\)/)
  })

  it('maps a client’s failure to store_unavailable, lets the gateway’s own errors through, and ignores what comes after', async () => {
    const sweeper = new DeadlineSweeper(1000)
    const refused = await guardedBy(sweeper, 'ledger charge', () => Promise.reject(new Error('ECONNREFUSED'))).catch((e: unknown) => e)
    expect(isGatewayError(refused) && refused.code).toBe('store_unavailable')
    expect(outcomeUnknown(refused)).toBe(false)
    expect((refused as Error & { cause?: Error }).cause?.message).toBe('ECONNREFUSED')
    const own = new GatewayError('rate_limit_exceeded', 'over')
    expect(await guardedBy(sweeper, 'ledger check', () => Promise.reject(own)).catch((e: unknown) => e)).toBe(own)

    // A step that failed is not failed again by its deadline: nothing is left armed.
    await vi.advanceTimersByTimeAsync(1500)
    expect(vi.getTimerCount()).toBe(0)
  })
})
