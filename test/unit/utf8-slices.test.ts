import { describe, expect, it } from 'vitest'
import { invalidUtf8At, invalidUtf8AtInSlices } from '../../src/json/utf8.js'
import { turnsDuring } from '../support/loop-turns.js'

/** Deterministic bytes from a seed: mostly valid UTF-8 of every length, with a defect now and then. */
function sample(seed: number, length: number, defects: boolean): Buffer {
  let state = seed
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    return state / 2 ** 32
  }
  const pieces = ['a', '"', 'é', '证', '😀', '\u{10ffff}', '\u0000']
  const bad = [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xbf, 0xbf, 0xbf, 0xbf], [0xff]]
  const parts: Buffer[] = []
  let size = 0
  while (size < length) {
    const part =
      defects && next() < 0.002
        ? Buffer.from(bad[Math.floor(next() * bad.length)] as number[])
        : Buffer.from(pieces[Math.floor(next() * pieces.length)] as string)
    parts.push(part)
    size += part.length
  }
  return Buffer.concat(parts)
}

describe('the UTF-8 check of a large body, a window at a time', () => {
  it('finds the same first invalid byte as the whole check, wherever windows fall', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const bytes = sample(seed, 4000, seed % 4 !== 0)
      for (const window of [1, 2, 3, 5, 64, 1000, 1 << 20]) {
        expect(await invalidUtf8AtInSlices(bytes, window), `seed ${seed}, window ${window}`).toBe(invalidUtf8At(bytes))
      }
    }
  })

  it('reads a character cut by a window’s end as whole, and four continuation bytes as invalid wherever cut', async () => {
    const emoji = Buffer.from('ab😀cd')
    for (let window = 1; window <= emoji.length; window++) expect(await invalidUtf8AtInSlices(emoji, window)).toBe(-1)
    const run = Buffer.from([0x61, 0xf0, 0x9f, 0x98, 0x80, 0x80, 0x61])
    for (let window = 1; window <= run.length; window++) expect(await invalidUtf8AtInSlices(run, window)).toBe(5)
    // A character cut by the end of the body is invalid at its first byte.
    expect(await invalidUtf8AtInSlices(Buffer.from([0x61, 0xe2, 0x82]), 2)).toBe(1)
  })

  it('takes a turn of the event loop between windows', async () => {
    const bytes = Buffer.alloc(10 * 1024 * 1024, 0x61)
    const { result, turns } = await turnsDuring(() => invalidUtf8AtInSlices(bytes))
    expect(result).toBe(-1)
    // 1 MiB a window: ten windows, nine turns between them.
    expect(turns).toBeGreaterThanOrEqual(9)
  })
})
