import { describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../src/json/hash.js'
import { requestBodyHashOffLoop } from '../../src/json/hash-worker.js'

/** The body shape that cost the most per byte to hash: a top-level array member of empty objects. */
function emptyObjects(mib: number): Buffer {
  return Buffer.from(`{"model":"m","messages":[${'{},'.repeat(Math.floor((mib * 1024 * 1024) / 3))}{}]}`)
}

const smallBody = (tag: string) =>
  Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `${tag}${'x'.repeat(1_200_000)}` }] }))

describe('the hash worker, fair per owner and bounded per job', () => {
  it('hashes 8 MiB of {} with the process growing by far less than the objects JSON.parse would make', async () => {
    const huge = emptyObjects(8)
    const before = process.memoryUsage.rss()
    let peak = before
    let sampling = true
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage.rss())
      if (sampling) setImmediate(sample)
    }
    sample()
    const hash = await requestBodyHashOffLoop(huge, 'owner-a')
    sampling = false
    // JSON.parse of these 2.8 million objects alone grows the process by about 300 MiB; the byte hasher holds
    // about one canonical copy of the body.
    expect(peak - before).toBeLessThan(96 * 1024 * 1024)
    expect(hash).toBe(requestBodyHash(huge))
  })

  it('answers a small body of one owner before a huge body another owner sent first', async () => {
    const order: string[] = []
    const a = requestBodyHashOffLoop(emptyObjects(8), 'owner-a').then(() => order.push('a'))
    const b = requestBodyHashOffLoop(smallBody('b'), 'owner-b').then(() => order.push('b'))
    await Promise.all([a, b])
    expect(order).toEqual(['b', 'a'])
  })

  it('keeps one owner’s own bodies in the order they came, each owner’s turn interleaved with the others’', async () => {
    const order: string[] = []
    // Every body is built before the first is handed on, so all four reach the worker together: building one while
    // the worker already runs would let a busy machine decide the order instead of the worker.
    const bodies = { a1: emptyObjects(4), a2: smallBody('a2'), b1: smallBody('b1'), c1: smallBody('c1') }
    const jobs = [
      requestBodyHashOffLoop(bodies.a1, 'owner-a').then(() => order.push('a1')),
      requestBodyHashOffLoop(bodies.a2, 'owner-a').then(() => order.push('a2')),
      requestBodyHashOffLoop(bodies.b1, 'owner-b').then(() => order.push('b1')),
      requestBodyHashOffLoop(bodies.c1, 'owner-c').then(() => order.push('c1')),
    ]
    await Promise.all(jobs)
    expect(order).toEqual(['b1', 'c1', 'a1', 'a2'])
  })
})
