import { describe, expect, it } from 'vitest'
import { isGatewayError } from '../../src/errors.js'
import { inspectJson, type JsonRules } from '../../src/json/inspect.js'
import { scanJsonObject } from '../../src/json/scan-body.js'

const rules: JsonRules = { maxDepth: 5, singleKeys: new Set(['model', 'stream']) }

/** The same verdict from the small-body inspector and from the large-body scanner (cut into tiny slices). */
async function verdicts(text: string): Promise<Array<{ message: string; param: string | undefined } | 'ok'>> {
  const bytes = Buffer.from(text)
  JSON.parse(text) // only valid JSON reaches either
  const outcome = async (run: () => unknown) => {
    try {
      await run()
      return 'ok' as const
    } catch (error) {
      if (!isGatewayError(error)) throw error
      expect(error.code).toBe('invalid_request')
      return { message: error.message, param: error.param }
    }
  }
  return [
    await outcome(() => inspectJson(bytes, rules)),
    await outcome(() => scanJsonObject(bytes, { rules, sliceBytes: 3, smallValueBytes: 8 })),
  ]
}

describe('JSON rules on every body path', () => {
  it.each([
    ['{"a":[[[[1]]]]}', 'ok'],
    ['{"a":[[[[[1]]]]]}', 'The request body nests objects and arrays deeper than 5 levels (limits.maxJsonDepth) at byte 9.'],
    ['{"a":"[[[[[[[[[["}', 'ok'],
    ['{"model":"a","x":{"model":"b"},"m":[{"model":"c"}]}', 'ok'],
    ['{"model":"a","other":1,"model":"b"}', "'model' appears more than once in the request body."],
    ['{"stream":true,"mo\\u0064el":"a","model":"b"}', "'model' appears more than once in the request body."],
    ['{"x":1,"x":2}', 'ok'],
    // Names of a single key's length that are not it, a longer one it begins, and one told only by its escapes.
    ['{"modal":1,"models":2,"model":"a","strea":3,"streams":4,"stream":true}', 'ok'],
    ['{"mod\u00e9":1,"modé":2,"model":"a"}', 'ok'],
    ['{"\u006d\u006f\u0064\u0065\u006c":"a","stream":true,"model":"b"}', "'model' appears more than once in the request body."],
    ['{"a":1e308,"b":-1.7976931348623157e308,"c":1e-400,"d":"1e400"}', 'ok'],
    ['{"a":[1,2,1e400]}', 'The request body holds a number too large for a double at byte 10.'],
    ['{"a":-1e999}', 'The request body holds a number too large for a double at byte 5.'],
    ['{"a":1.8e308}', 'The request body holds a number too large for a double at byte 5.'],
    [`{"a":${'9'.repeat(400)}}`, 'The request body holds a number too large for a double at byte 5.'],
    [`{"a":0.${'0'.repeat(400)}1e400}`, 'ok'],
  ])('%s → %s', async (text, expected) => {
    const [small, large] = await verdicts(text)
    expect(small).toEqual(large)
    if (expected === 'ok') expect(small).toBe('ok')
    else expect(small).toMatchObject({ message: expected })
  })

  it('tells a repeated member among forty read ones, past the first 31 as before them', () => {
    const many: JsonRules = { maxDepth: 5, singleKeys: new Set(Array.from({ length: 40 }, (_, i) => `field${i}`)) }
    const all = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, i]))
    expect(() => inspectJson(Buffer.from(JSON.stringify(all)), many)).not.toThrow()
    for (const repeated of ['field3', 'field30', 'field31', 'field39']) {
      const text = `${JSON.stringify(all).slice(0, -1)},"${repeated}":0}`
      expect(() => inspectJson(Buffer.from(text), many), repeated).toThrow(`'${repeated}' appears more than once`)
    }
  })

  it('names the repeated field as the param', async () => {
    const [small] = await verdicts('{"stream":true,"stream":false}')
    expect(small).toMatchObject({ param: 'stream' })
  })
})
