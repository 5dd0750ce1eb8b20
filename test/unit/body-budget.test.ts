import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { BodyBudget } from '../../src/http/body-budget.js'
import { collectBody, PREALLOCATE_BYTES } from '../../src/http/collect-body.js'

describe('BodyBudget', () => {
  it('counts reservations per owner and in total, refuses past either, and gives everything back once', () => {
    const budget = new BodyBudget({ total: 100, perOwner: 60 })
    const a = budget.reserve('a', 50)
    expect(() => budget.reserve('a', 20)).toThrow(expect.objectContaining({ code: 'overloaded', retryAfterSeconds: 1 }))
    const b = budget.reserve('b', 40)
    expect(b.grow(20)).toBe(false)
    expect(b.grow(10)).toBe(true)
    expect(budget.held).toBe(100)
    a.release()
    a.release()
    expect(budget.held).toBe(50)
    b.release()
    expect(budget.held).toBe(0)
  })
})

describe('collectBody with a declared length', () => {
  it('never allocates more than a small cap from the declaration alone, and grows with what arrives', async () => {
    const stream = new PassThrough()
    const read = collectBody(stream, {
      limit: 64 << 20,
      expectedBytes: (64 << 20) - 1,
      afterOverflow: 'drain',
      tooLarge: () => new Error('too large'),
      broken: () => new Error('broken'),
    })
    stream.end('{"a":1234}')
    const body = await read
    expect(body.toString()).toBe('{"a":1234}')
    expect(body.buffer.byteLength).toBeLessThanOrEqual(PREALLOCATE_BYTES)

    const big = new PassThrough()
    const bigRead = collectBody(big, {
      limit: 8 << 20,
      expectedBytes: 3 << 20,
      afterOverflow: 'drain',
      tooLarge: () => new Error('x'),
      broken: () => new Error('y'),
    })
    const piece = Buffer.alloc(256 * 1024, 7)
    for (let i = 0; i < 12; i++) big.write(piece)
    big.end()
    const whole = await bigRead
    expect(whole.length).toBe(3 << 20)
    expect(whole.every((byte) => byte === 7)).toBe(true)
  })

  it('counts a large declared body as it arrives and a small one whole at its first chunk, never from the declaration alone', async () => {
    const quarter = (3 << 20) / 4
    for (const [declared, expected] of [
      [1000, [1000, 10]],
      [3 << 20, [quarter, quarter, quarter, quarter, 10]],
    ] as const) {
      const grown: number[] = []
      const stream = new PassThrough()
      const read = collectBody(stream, {
        limit: 8 << 20,
        expectedBytes: declared,
        afterOverflow: 'drain',
        tooLarge: () => new Error('too large'),
        broken: () => new Error('broken'),
        budget: { grow: (bytes) => grown.push(bytes) > 0 },
      })
      await new Promise((resolve) => setImmediate(resolve))
      expect(grown).toEqual([])
      const piece = Buffer.alloc(declared / 4, 1)
      for (let i = 0; i < 4; i++) stream.write(piece)
      stream.end(Buffer.alloc(10, 1))
      expect((await read).length).toBe(declared + 10)
      expect(grown).toEqual(expected)
    }
  })

  it('refuses with the budget error at the chunk the budget cannot hold', async () => {
    for (const declared of [1000, 3 << 20]) {
      let room = 600
      const stream = new PassThrough()
      const read = collectBody(stream, {
        limit: 8 << 20,
        expectedBytes: declared,
        afterOverflow: 'drain',
        tooLarge: () => new Error('too large'),
        broken: () => new Error('broken'),
        overBudget: () => new Error('over budget'),
        budget: {
          grow: (bytes) => {
            if (bytes > room) return false
            room -= bytes
            return true
          },
        },
      })
      stream.write(Buffer.alloc(500, 1))
      stream.end(Buffer.alloc(500, 1))
      await expect(read).rejects.toThrow('over budget')
    }
  })
})
