import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { givenUp, resume, resumeEvery } from '../../src/background/lapse.js'
import { createGatewayStore } from '../../src/store/gateway-store.js'

// The settling of a background lease that passed, on the in-memory store (one set-if-absent per passed lease): the
// holder that comes back first keeps the call, readers give it up only a lease after the first of them saw it passed,
// and once given up the holder cannot take it back.

const OWNER = 'a'.repeat(64)
const REQUEST = '01M8JEXCYV00PZ3NVS0Q5X19JW'
const clock = { leaseMs: 200, ttlMs: 60_000 }

function keys() {
  return { store: createGatewayStore(), owner: OWNER, requestId: REQUEST }
}

describe('background lease lapses', () => {
  it('a lease that holds is never given up', async () => {
    const k = keys()
    expect(await givenUp(k, Date.now() + 1000, clock)).toBe(false)
  })

  it('readers give a passed lease up only a lease after the first of them saw it; the holder then cannot resume', async () => {
    const k = keys()
    const lease = Date.now() - 1
    expect(await givenUp(k, lease, clock)).toBe(false)
    await sleep(clock.leaseMs / 2)
    expect(await givenUp(k, lease, clock)).toBe(false)
    await sleep(clock.leaseMs / 2 + 20)
    expect(await givenUp(k, lease, clock)).toBe(true)
    expect(await resume(k, lease, clock)).toBeUndefined()
    // Every later reader sees the same.
    expect(await givenUp(k, lease, clock)).toBe(true)
  })

  it('a holder that comes back before readers gave up keeps the call, however long the readers wait after', async () => {
    const k = keys()
    const lease = Date.now() - 1
    expect(await givenUp(k, lease, clock)).toBe(false)
    const held = await resume(k, lease, clock)
    expect(held).toBeGreaterThan(Date.now())
    await sleep(clock.leaseMs / 2)
    expect(await givenUp(k, lease, clock)).toBe(false)
    // Its own earlier claim is still its lease when asked again (a write after the claim failed).
    expect(await resume(k, lease, clock)).toBe(held)
  })

  it('a holder that resumed and then went quiet again is given up on its new lease, a lease after it was seen passed', async () => {
    const k = keys()
    const lease = Date.now() - 1
    const held = (await resume(k, lease, clock)) as number
    await sleep(held - Date.now() + 5)
    expect(await givenUp(k, lease, clock)).toBe(false)
    await sleep(clock.leaseMs + 20)
    expect(await givenUp(k, lease, clock)).toBe(true)
    expect(await resume(k, held, clock)).toBeUndefined()
  })

  it('a holder whose last head write landed unseen is given up by readers who judged its lease by that head', async () => {
    const k = keys()
    // The store confirmed a head with lease `confirmed`; a later head, with `unseen`, landed but its answer was lost.
    const confirmed = Date.now() - 300
    const unseen = Date.now() - 1
    expect(await givenUp(k, unseen, clock)).toBe(false)
    await sleep(clock.leaseMs + 20)
    expect(await givenUp(k, unseen, clock)).toBe(true)
    // By the confirmed lease alone the holder would take the call back, against what every reader saw.
    expect(await resumeEvery(k, [confirmed, unseen], clock)).toBeUndefined()
    expect(await givenUp(k, unseen, clock)).toBe(true)
  })

  it('a holder back in time resumes on every lease readers may have seen: readers judging by either follow it to its new lease', async () => {
    const k = keys()
    const confirmed = Date.now() - 300
    const unseen = Date.now() - 1
    const held = await resumeEvery(k, [confirmed, unseen], clock)
    expect(held).toBeGreaterThan(Date.now())
    await sleep(clock.leaseMs + 20)
    expect(await givenUp(k, confirmed, clock)).toBe(false)
    expect(await givenUp(k, unseen, clock)).toBe(false)
  })
})
