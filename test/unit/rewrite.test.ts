import { describe, expect, it } from 'vitest'
import { replaceStringsAt, replaceTopLevelString } from '../../src/json/rewrite.js'

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

describe('replaceStringsAt', () => {
  const rename = (value: string) => (value === 'models/a' ? 'models/b' : undefined)

  it('replaces the strings at the paths, array elements included, and keeps every other byte', () => {
    const text = [
      '{ "requests" : [ {"content":{"parts":[{"text":"models/a \\" \\\\"}]}, "model" : "models/a"},',
      ' {"model":"models/c","x":[1,2,{"model":"models/a"}]}, {"model":"models/a"} ], "model":"models/a", "z": {"model":"models/a"} }',
    ].join('\n')
    expect(replaceStringsAt(text, [['requests', '*', 'model'], ['model']], rename)).toBe(
      [
        '{ "requests" : [ {"content":{"parts":[{"text":"models/a \\" \\\\"}]}, "model" : "models/b"},',
        ' {"model":"models/c","x":[1,2,{"model":"models/a"}]}, {"model":"models/b"} ], "model":"models/b", "z": {"model":"models/a"} }',
      ].join('\n'),
    )
  })

  it('leaves values that are not strings, empty containers and unmatched paths as they are', () => {
    expect(replaceStringsAt('{"a":[]  ,"b":{},"model":"models/a"}', [['model']], rename)).toBe('{"a":[]  ,"b":{},"model":"models/b"}')
    expect(replaceStringsAt('{"model":1e5,"m":true,"n":null}', [['model']], () => 'y')).toBe('{"model":1e5,"m":true,"n":null}')
    expect(replaceStringsAt('{"requests":{"*":{"model":"models/a"}}}', [['requests', '*', 'model']], rename)).toBe(
      '{"requests":{"*":{"model":"models/a"}}}',
    )
  })

  it('writes the new value as JSON and reads keys with escapes', () => {
    expect(JSON.parse(replaceStringsAt('{"mo\\u0064el":"models/a"}', [['model']], () => 'new "one"'))).toEqual({ model: 'new "one"' })
  })
})
