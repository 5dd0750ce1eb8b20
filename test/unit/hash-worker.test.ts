import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { requestBodyHash } from '../../src/json/hash.js'
import { requestBodyHashOffLoop } from '../../src/json/hash-worker.js'
import { documentText, Gen } from '../support/json-corpus.js'

describe('requestBodyHashOffLoop', () => {
  it('hashes exactly as the main thread does, over a seeded corpus, in parallel', async () => {
    const g = new Gen(20261122)
    const texts = Array.from({ length: 300 }, () => documentText(g))
    const off = await Promise.all(texts.map((text) => requestBodyHashOffLoop(Buffer.from(text)).catch((error: unknown) => error)))
    texts.forEach((text, i) => {
      let expected: unknown
      try {
        expected = requestBodyHash(text)
      } catch (error) {
        expected = error
      }
      if (typeof expected === 'string') expect(off[i], text).toBe(expected)
      else expect(isGatewayError(off[i]) && (off[i] as { code: string }).code, text).toBe('invalid_request')
    })
  })

  it('hashes a body in shared memory, as large bodies are joined, without copying it and exactly alike', async () => {
    const text = JSON.stringify({ messages: Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', content: `m${i}` })) })
    const shared = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)))
    shared.write(text)
    expect(await requestBodyHashOffLoop(shared)).toBe(requestBodyHash(text))
    // The caller's buffer is untouched: it is still forwarded and stored.
    expect(shared.toString()).toBe(text)
  })

  it('keeps the test vector of the service description, and a large body', async () => {
    const vector = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"证明费马大定理."}],"stream":false}'
    expect(await requestBodyHashOffLoop(Buffer.from(vector))).toBe('6ded87ad1c72779a')
    const big = Buffer.from(
      JSON.stringify({ messages: Array.from({ length: 50_000 }, (_, i) => ({ role: 'user', content: `m${i}`, n: i })) }),
    )
    expect(await requestBodyHashOffLoop(big)).toBe(requestBodyHash(big))
  })

  it('answers a body that is not JSON with invalid_request', async () => {
    const error = await requestBodyHashOffLoop(Buffer.from('{"a":')).catch((e: unknown) => e)
    expect(isGatewayError(error) && error.code).toBe('invalid_request')
  })
})
