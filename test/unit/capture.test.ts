import { describe, expect, it } from 'vitest'
import type { CallSpec } from '../../src/call/call-spec.js'
import { hashWhileWaiting } from '../../src/call/capture.js'
import { requestBodyHash } from '../../src/json/hash.js'

/** Only what hashing reads of a call. */
const specWith = (bytes: Buffer, value?: Record<string, unknown>) => ({ body: { bytes, value } }) as unknown as CallSpec

describe('hashWhileWaiting', () => {
  it('hashes the request body as the record will carry it', async () => {
    const value = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
    expect(await hashWhileWaiting(specWith(Buffer.from(JSON.stringify(value)), value))).toBe(requestBodyHash(value))
    expect(await hashWhileWaiting(specWith(Buffer.from('{"b":1, "a":2}')))).toBe(requestBodyHash({ a: 2, b: 1 }))
  })

  it('leaves no rejection unheard when no record is kept after all, and still rejects for whoever awaits it', async () => {
    const unheard: unknown[] = []
    const listener = (reason: unknown) => unheard.push(reason)
    process.on('unhandledRejection', listener)
    try {
      const hashing = hashWhileWaiting(specWith(Buffer.from('{not json')))
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(unheard).toEqual([])
      await expect(hashing).rejects.toThrow('not valid JSON')
    } finally {
      process.off('unhandledRejection', listener)
    }
  })
})
