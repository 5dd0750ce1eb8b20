import { describe, expect, it } from 'vitest'
import { RefreshingValue } from '../../src/upstream/refreshing-value.js'

describe('RefreshingValue', () => {
  it('fetches once for many waiting calls and reuses the value while it lives', async () => {
    let now = 0
    let fetches = 0
    const value = new RefreshingValue(
      async () => {
        fetches++
        return { value: `token-${fetches}`, expiresAt: now + 3_600_000 }
      },
      { now: () => now },
    )
    const first = await Promise.all([value.get(), value.get(), value.get()])
    expect(first).toEqual(['token-1', 'token-1', 'token-1'])
    now += 3_000_000
    expect(await value.get()).toBe('token-1')
    expect(fetches).toBe(1)
  })

  it('refreshes in the background inside the refresh window and never hands out an expired value', async () => {
    let now = 0
    let fetches = 0
    const value = new RefreshingValue(
      async () => {
        fetches++
        return { value: `token-${fetches}`, expiresAt: now + 600_000 }
      },
      { now: () => now, refreshBeforeMs: 300_000 },
    )
    expect(await value.get()).toBe('token-1')
    now = 400_000 // 200 s left: still good, a refresh starts
    expect(await value.get()).toBe('token-1')
    await Promise.resolve()
    await Promise.resolve()
    expect(await value.get()).toBe('token-2')
    now = 400_000 + 599_000 // token-2 has 1 s left: not sent, fetched anew
    expect(await value.get()).toBe('token-3')
  })

  it('rejects the waiting calls when a refresh fails and tries again on the next call', async () => {
    let fail = true
    const value = new RefreshingValue(async () => {
      if (fail) throw new Error('token endpoint refused')
      return { value: 'ok', expiresAt: undefined }
    })
    await expect(Promise.all([value.get(), value.get()])).rejects.toThrow('token endpoint refused')
    fail = false
    expect(await value.get()).toBe('ok')
    value.invalidate()
    expect(await value.get()).toBe('ok')
  })
})
