import { describe, expect, it, vi } from 'vitest'
import { newRequestId, REQUEST_ID_PATTERN } from '../../src/http/request-id.js'

describe('request ids', () => {
  it('are 26 URL-safe characters', () => {
    const id = newRequestId()
    expect(id).toMatch(REQUEST_ID_PATTERN)
    expect(encodeURIComponent(id)).toBe(id)
  })

  it('strictly increase, also within one millisecond', () => {
    const now = Date.now()
    const ids = Array.from({ length: 1000 }, () => newRequestId(now))
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
  })

  it('sort by creation time', () => {
    const earlier = newRequestId(Date.UTC(2030, 0, 1))
    const later = newRequestId(Date.UTC(2030, 0, 2))
    expect(earlier < later).toBe(true)
    expect(later.slice(0, 10) > earlier.slice(0, 10)).toBe(true)
  })

  it('draw every random digit afresh in a new millisecond, over the whole alphabet (the first over its lower half)', () => {
    const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
    const seen = Array.from({ length: 16 }, () => new Set<string>())
    // Later than the ids made above (a time not later than the last id's is counted on, not drawn afresh).
    const start = Date.UTC(2031, 0, 1)
    for (let ms = start; ms < start + 2000; ms++) {
      const random = newRequestId(ms).slice(10)
      for (let i = 0; i < 16; i++) seen[i]!.add(random[i]!)
    }
    expect([...seen[0]!].sort().join('')).toBe(ALPHABET.slice(0, 16))
    for (let i = 1; i < 16; i++) expect(seen[i]!.size).toBe(32)
  })

  it('carry the time in ms in their first ten characters, up to the largest a ULID holds', () => {
    const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
    const timeOf = (id: string) => [...id.slice(0, 10)].reduce((ms, char) => ms * 32 + ALPHABET.indexOf(char), 0)
    // Later than any id made before in this process, and across the two halves the time is encoded in.
    const base = 2 ** 42
    for (const ms of [base + 2 ** 25 - 1, base + 2 ** 25, base + 2 ** 30 + 31, 2 ** 48 - 1]) expect(timeOf(newRequestId(ms))).toBe(ms)
  })

  it('carry the right time from one millisecond to the next, within 1024 ms and across their boundaries', async () => {
    const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
    const timeOf = (id: string) => [...id.slice(0, 10)].reduce((ms, char) => ms * 32 + ALPHABET.indexOf(char), 0)
    // After the largest time above, a time not later than the last id's keeps that id's time: this test runs on its
    // own ids, made in a fresh module.
    vi.resetModules()
    const fresh = await import('../../src/http/request-id.js')
    const start = Date.UTC(2032, 0, 1) - 1500
    for (let ms = start; ms < start + 5000; ms += 7) expect(timeOf(fresh.newRequestId(ms))).toBe(ms)
    // A jump of whole periods of 1024 ms changes only the first eight characters.
    for (const ms of [start + 5000 + 1024 * 32, start + 5000 + 1024 * 32 * 32 * 32]) expect(timeOf(fresh.newRequestId(ms))).toBe(ms)
  })
})
