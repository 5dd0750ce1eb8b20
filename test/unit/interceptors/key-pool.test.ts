import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { KeySelection } from '../../../src/types.js'
import { keyPool } from '../../../src/upstream/interceptors/key-pool.js'
import type { Send } from '../../../src/upstream/send.js'
import { modelsOf, openBody, requestFor, scriptedNext, sendFailures, trackedBody } from '../../support/fake-send.js'

/** A model on an upstream with `keys` keys (aliases key-1, key-2, …), each an interceptor's own pool. */
function pooled(keys: number, keySelection: KeySelection = 'round-robin') {
  const apiKeys = Array.from({ length: keys }, (_, i) => `sk-pool-secret-${i + 1}`)
  const models = modelsOf({
    upstreams: { pool: { type: 'openai', baseUrl: 'https://pool.example.test/v1', apiKeys, keySelection } },
    models: [{ id: 'm', upstream: 'pool' }],
  })
  const model = models.get('m')!
  return { model, call: (send: Send) => send(requestFor(model)) }
}

const aliases = (next: { calls: Array<{ key?: { alias: string } }> }) => next.calls.map((request) => request.key?.alias)

describe('the key pool interceptor', () => {
  it('sends a call to an upstream with one key straight through, as it came', async () => {
    const { model } = pooled(1)
    const next = scriptedNext({ status: 200 })
    const request = requestFor(model)
    await keyPool()(next)(request)
    expect(next.calls).toHaveLength(1)
    expect(next.calls[0]).toBe(request)
    expect(next.calls[0]?.key).toBeUndefined()
  })

  it('spreads calls over the keys in turn (round robin by weight)', async () => {
    const { call } = pooled(2)
    const next = scriptedNext({ status: 200 }, { status: 200 }, { status: 200 }, { status: 200 })
    const send = keyPool()(next)
    for (let i = 0; i < 4; i++) await call(send)
    expect(aliases(next)).toEqual(['key-1', 'key-2', 'key-1', 'key-2'])
  })

  it.each([401, 403, 429])(
    'moves a call its key got %i for to the next key, drains the refusal and answers with the next key',
    async (status) => {
      const { call } = pooled(3)
      const refused = trackedBody()
      const next = scriptedNext({ status, body: refused.body }, { status: 200 })
      const response = await call(keyPool()(next))
      expect(response.statusCode).toBe(200)
      expect(response.served.keyAlias).toBe('key-2')
      expect(aliases(next)).toEqual(['key-1', 'key-2'])
      // Each key tried is an attempt of its own, for the attempt log and the attempt events.
      expect(next.calls.map((request) => request.attempt)).toEqual([1, 2])
      expect(refused.drained).toBe(true)
    },
  )

  it("answers with the last key's refusal when every key refused, its body left for the caller", async () => {
    const { call } = pooled(2)
    const first = trackedBody()
    const last = trackedBody('{"error":"last"}')
    const next = scriptedNext({ status: 429, body: first.body }, { status: 403, body: last.body })
    const response = await call(keyPool()(next))
    expect(response.statusCode).toBe(403)
    expect(response.served.keyAlias).toBe('key-2')
    expect(response.body).toBe(last.body)
    expect(first.drained).toBe(true)
    expect(last.drained).toBe(false)
  })

  it('blames neither the key for an upstream failure nor a failed connection: no other key is tried', async () => {
    const { call } = pooled(2)
    const failure = sendFailures.refused()
    const send = keyPool()(scriptedNext({ status: 500 }, { error: failure }))
    expect((await call(send)).statusCode).toBe(500)
    await expect(call(send)).rejects.toBe(failure)
  })
})

describe('a refused key rests', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  // Least-in-flight, with every answer over at once, picks the key picked longest ago: a key is back exactly when
  // its rest is over, where round robin would first give the other key the turn it owes it.
  const resting = () => pooled(2, 'least-in-flight')

  it.each([
    ['retry-after in seconds', { 'retry-after': '5' }, 5_000],
    ['retry-after-ms', { 'retry-after-ms': '1500' }, 1_500],
    ['retry-after as a date', { 'retry-after': new Date(Date.UTC(2030, 0, 1, 0, 0, 7)).toUTCString() }, 7_000],
    ['no more than 60 s, whatever is asked', { 'retry-after': '3600' }, 60_000],
  ])('for as long as the upstream asked (%s)', async (_, headers, restMs) => {
    vi.setSystemTime(Date.UTC(2030, 0, 1))
    const { call } = resting()
    const next = scriptedNext({ status: 429, headers }, { status: 200 }, { status: 200 }, { status: 200 })
    const send = keyPool()(next)
    await call(send)
    vi.advanceTimersByTime(restMs - 1)
    await call(send)
    vi.advanceTimersByTime(1)
    await call(send)
    expect(aliases(next)).toEqual(['key-1', 'key-2', 'key-2', 'key-1'])
  })

  it('without retry-after: 1 s, doubled for each refusal in a row, and forgotten after a success', async () => {
    const { call } = resting()
    const next = scriptedNext(
      { status: 401 }, // key-1: a first refusal, 1 s
      { status: 200 }, // key-2
      { status: 401 }, // key-1, back after 1 s: a second refusal in a row, 2 s
      { status: 200 }, // key-2
      { status: 200 }, // key-2: key-1 rests 1 ms more
      { status: 401 }, // key-1, back after 2 s: a third refusal in a row, 4 s
      { status: 200 }, // key-2
      { status: 200 }, // key-2: key-1 rests 1 ms more
      { status: 200 }, // key-1, back: its refusals are forgotten
      { status: 200 }, // key-2
      { status: 401 }, // key-1: a first refusal again, 1 s (8 s had they not been forgotten)
      { status: 200 }, // key-2
      { status: 200 }, // key-2: key-1 rests 1 ms more
      { status: 200 }, // key-1
    )
    const send = keyPool()(next)
    await call(send)
    vi.advanceTimersByTime(1_000)
    await call(send)
    vi.advanceTimersByTime(1_999)
    await call(send)
    vi.advanceTimersByTime(1)
    await call(send)
    vi.advanceTimersByTime(3_999)
    await call(send)
    vi.advanceTimersByTime(1)
    await call(send)
    await call(send)
    await call(send)
    vi.advanceTimersByTime(999)
    await call(send)
    vi.advanceTimersByTime(1)
    await call(send)
    expect(aliases(next)).toEqual([
      'key-1',
      'key-2',
      'key-1',
      'key-2',
      'key-2',
      'key-1',
      'key-2',
      'key-2',
      'key-1',
      'key-2',
      'key-1',
      'key-2',
      'key-2',
      'key-1',
    ])
  })
})

describe('least-in-flight selection', () => {
  it('counts a streamed answer as in flight until its body closes, read or not', async () => {
    const { call } = pooled(2, 'least-in-flight')
    const streaming = openBody()
    const next = scriptedNext({ status: 200, body: streaming }, { status: 200 }, { status: 200 }, { status: 200 })
    const send = keyPool()(next)
    await call(send) // key-1, still streaming
    await call(send) // key-2, whole
    await call(send) // key-2 again: key-1 has a call in flight
    streaming.destroy()
    await new Promise((resolve) => streaming.once('close', resolve))
    await call(send) // key-1: both idle, and key-1 was picked longer ago
    expect(aliases(next)).toEqual(['key-1', 'key-2', 'key-2', 'key-1'])
  })

  it('counts a call that failed as over', async () => {
    const { call } = pooled(2, 'least-in-flight')
    const next = scriptedNext({ error: sendFailures.reset() }, { status: 200 }, { status: 200 })
    const send = keyPool()(next)
    await expect(call(send)).rejects.toMatchObject({ code: 'upstream_unreachable' })
    await call(send) // key-2, never picked
    await call(send) // key-1: had its failed call stayed counted, key-2 again
    expect(aliases(next)).toEqual(['key-1', 'key-2', 'key-1'])
  })
})
