import { describe, expect, it } from 'vitest'
import { bearer } from '../../src/dialects/shared.js'

// The key of an `Authorization: Bearer <key>` header, read without the regular expression as SDKs write it, and with
// it otherwise: both ways give what the expression alone gave.
const expression = (header: string | undefined) => (header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1] : undefined)

describe('bearer', () => {
  it.each([
    ['Bearer sk-abc123', 'sk-abc123'],
    ['Bearer  sk-two-spaces', 'sk-two-spaces'],
    ['bearer sk-lower', 'sk-lower'],
    ['Bearer\tsk-tab', 'sk-tab'],
    ['Bearer sk-trailing \t', 'sk-trailing'],
    ['Bearer sk-é', 'sk-é'],
    ['Bearer sk a', undefined],
    ['Bearer sk\u0001a', 'sk\u0001a'],
    ['Bearer ', undefined],
    ['Bearer', undefined],
    ['Basic abc', undefined],
    ['', undefined],
  ])('%j', (header, key) => {
    expect(bearer(header)).toBe(key)
    expect(bearer(header)).toBe(expression(header))
  })

  it('reads no header as no key', () => {
    expect(bearer(undefined)).toBeUndefined()
  })
})
