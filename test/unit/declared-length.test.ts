import { describe, expect, it } from 'vitest'
import { declaredLength } from '../../src/http/read-body.js'

describe('declaredLength', () => {
  it('reads a content-length as Number() does, digits by the fast path and anything else by Number()', () => {
    const digits = ['0', '7', '162', '007', '1048576', '999999999999999', '1234567890123456']
    const others = ['', ' 12', '12 ', '0x10', '1e3', '12a', '-1', '+5', '1.5']
    const values = [...digits, ...others]
    for (const value of values) expect(declaredLength(value)).toBe(Number(value))
  })

  it('is NaN when no length is declared', () => {
    expect(declaredLength(undefined)).toBeNaN()
  })
})
