import { describe, expect, it } from 'vitest'
import { replaceTopLevelString } from '../../src/json/rewrite.js'

describe('replaceTopLevelString', () => {
  it('replaces only the top-level value and keeps every other byte', () => {
    const text = '{ "messages": [{"model": "inner"}],\n  "model" :  "gpt-4o-mini", "x": "model" }'
    expect(replaceTopLevelString(text, 'model', 'upstream-name')).toBe(
      '{ "messages": [{"model": "inner"}],\n  "model" :  "upstream-name", "x": "model" }',
    )
  })

  it('reads keys and values with escapes, and writes the new value as JSON', () => {
    const text = '{"a":"q\\"uote","mo\\u0064el":"old\\\\","z":1}'
    expect(JSON.parse(replaceTopLevelString(text, 'model', 'new "one"'))).toEqual({ a: 'q"uote', model: 'new "one"', z: 1 })
  })

  it('leaves a body without a top-level string model as it is', () => {
    expect(replaceTopLevelString('{"model":42}', 'model', 'x')).toBe('{"model":42}')
    expect(replaceTopLevelString('{"nested":{"model":"m"}}', 'model', 'x')).toBe('{"nested":{"model":"m"}}')
  })
})
