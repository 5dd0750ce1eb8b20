import { describe, expect, it } from 'vitest'
import { JOIN_IN_SLICES_FROM_BYTES, joinedNow, joinInSlices } from '../../src/http/join-chunks.js'
import { turnsDuring } from '../support/loop-turns.js'

describe('joining the chunks of a body', () => {
  it('joins a small body at once, and hands a lone chunk back as it is', () => {
    const one = Buffer.from('abc')
    expect(joinedNow([one], 3)).toBe(one)
    expect(joinedNow([Buffer.from('ab'), Buffer.from('c')], 3)?.toString()).toBe('abc')
    const half = Buffer.alloc(JOIN_IN_SLICES_FROM_BYTES / 2)
    expect(joinedNow([half, half], JOIN_IN_SLICES_FROM_BYTES)).toBeUndefined()
  })

  it('joins a large body into shared memory a slice at a time, with turns of the event loop between slices', async () => {
    // Chunks of every size: many small ones, and ones bigger than a slice, which are cut.
    const chunks: Buffer[] = []
    let size = 0
    for (let i = 0; size < 24 * 1024 * 1024; i++) {
      const chunk = Buffer.alloc(i % 7 === 0 ? 5 * 1024 * 1024 + 3 : 65_536 - (i % 13), i % 251)
      chunks.push(chunk)
      size += chunk.length
    }
    const { result: joined, turns } = await turnsDuring(() => joinInSlices(chunks, size))
    expect(joined.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(joined.equals(Buffer.concat(chunks, size))).toBe(true)
    // At most 1 MiB per turn: a 24 MiB body takes 23 turns at least.
    expect(turns).toBeGreaterThanOrEqual(23)
  })
})
