import { describe, expect, it } from 'vitest'
import { requestBodyHash } from '../../src/json/hash.js'
import { hashOnce } from '../../src/recovery/body-hash.js'

describe('hashOnce', () => {
  it('hashes the request body as the record will carry it, once for every asker', async () => {
    const value = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
    const hash = hashOnce({ bytes: Buffer.from(JSON.stringify(value)), value }, 'o')
    const first = hash()
    expect(hash()).toBe(first)
    expect(await first).toBe(requestBodyHash(value))
    expect(await hashOnce({ bytes: Buffer.from('{"b":1, "a":2}'), value: undefined }, 'o')()).toBe(requestBodyHash({ a: 2, b: 1 }))
  })

  it('leaves no rejection unheard when only begun, and still rejects for whoever awaits it', async () => {
    const unheard: unknown[] = []
    const listener = (reason: unknown) => unheard.push(reason)
    process.on('unhandledRejection', listener)
    try {
      const hash = hashOnce({ bytes: Buffer.from('{not json'), value: undefined }, 'o')
      void hash()
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(unheard).toEqual([])
      await expect(hash()).rejects.toThrow('not valid JSON')
    } finally {
      process.off('unhandledRejection', listener)
    }
  })
})
