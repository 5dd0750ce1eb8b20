import { describe, expect, it } from 'vitest'
import { declaresNothing, fromGeminiSchema, toGeminiSchema } from '../../../src/dialects/gemini/schema.js'
import { Refusal } from '../../../src/translate/readers.js'

describe('JSON Schema to the Gemini subset', () => {
  it('maps the documented weather function parameters', () => {
    expect(
      toGeminiSchema({
        type: 'object',
        properties: {
          location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['location'],
        additionalProperties: false,
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        location: { type: 'STRING', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: 'STRING', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location'],
    })
  })

  it('turns a type array with null into nullable', () => {
    expect(toGeminiSchema({ type: ['string', 'null'], description: 'd' })).toEqual({ type: 'STRING', description: 'd', nullable: true })
  })

  it('turns anyOf with a null branch into nullable, and a single branch into that schema', () => {
    expect(toGeminiSchema({ anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] })).toEqual({
      type: 'INTEGER',
      minimum: 1,
      nullable: true,
    })
    expect(toGeminiSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] })
  })

  it('inlines local non-recursive $ref and drops the definitions', () => {
    expect(
      toGeminiSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { step: { $ref: '#/$defs/step' }, steps: { type: 'array', items: { $ref: '#/definitions/step' } } },
        $defs: { step: { type: 'object', properties: { output: { type: 'string' } }, required: ['output'] } },
        definitions: { step: { type: 'object', properties: { output: { type: 'string' } }, required: ['output'] } },
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        step: { type: 'OBJECT', properties: { output: { type: 'STRING' } }, required: ['output'] },
        steps: { type: 'ARRAY', items: { type: 'OBJECT', properties: { output: { type: 'STRING' } }, required: ['output'] } },
      },
    })
  })

  it.each([
    [
      'a recursive $ref',
      {
        type: 'object',
        properties: { child: { $ref: '#/$defs/node' } },
        $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
      },
    ],
    ['a remote $ref', { $ref: 'https://example.com/schema.json' }],
    ['additionalProperties as a schema', { type: 'object', additionalProperties: { type: 'string' } }],
    ['additionalProperties: true', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true }],
    ['oneOf', { oneOf: [{ type: 'string' }, { type: 'number' }] }],
    ['allOf', { allOf: [{ type: 'string' }] }],
    ['several non-null types', { type: ['string', 'number'] }],
    ['a numeric enum', { type: 'integer', enum: [1, 2] }],
    ['a tuple', { type: 'array', prefixItems: [{ type: 'string' }] }],
    ['an untyped schema', { description: 'anything' }],
    ['an object with no properties inside', { type: 'object', properties: { free: { type: 'object', properties: {} } } }],
  ])('has no subset form for %s', (_name, schema) => {
    expect(toGeminiSchema(schema)).toBeUndefined()
  })

  it('maps const to a one-value enum', () => {
    expect(toGeminiSchema({ const: 'fixed' })).toEqual({ type: 'STRING', enum: ['fixed'] })
  })

  it('sees a parameters schema that declares nothing', () => {
    expect(declaresNothing({ type: 'object', properties: {} })).toBe(true)
    expect(declaresNothing({ type: 'object', properties: {}, additionalProperties: false, required: [] })).toBe(true)
    expect(declaresNothing({ type: 'object', properties: { a: { type: 'string' } } })).toBe(false)
  })
})

describe('Gemini schema to JSON Schema', () => {
  it('maps the documented subset, types lowercased and nullable as a null type', () => {
    expect(
      fromGeminiSchema(
        {
          type: 'OBJECT',
          properties: {
            recipeName: { type: 'STRING' },
            rating: { type: 'INTEGER', nullable: true, minimum: 1, maximum: 5, format: 'int32' },
            tags: { type: 'ARRAY', items: { type: 'STRING', enum: ['a', 'b'] }, maxItems: '3' },
          },
          required: ['recipeName'],
          propertyOrdering: ['tags', 'recipeName'],
        },
        'p',
      ),
    ).toEqual({
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 3 },
        recipeName: { type: 'string' },
        rating: { type: ['integer', 'null'], minimum: 1, maximum: 5, format: 'int32' },
      },
      required: ['recipeName'],
    })
  })

  it('keeps property order from propertyOrdering', () => {
    const out = fromGeminiSchema(
      { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, propertyOrdering: ['b', 'a'] },
      'p',
    )
    expect(Object.keys(out.properties as object)).toEqual(['b', 'a'])
  })

  it('maps nullable enums and anyOf', () => {
    expect(fromGeminiSchema({ type: 'STRING', enum: ['x'], nullable: true }, 'p')).toEqual({ type: ['string', 'null'], enum: ['x', null] })
    expect(fromGeminiSchema({ anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }], nullable: true }, 'p')).toEqual({
      anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }],
    })
  })

  it('refuses a keyword outside the subset, naming its path', () => {
    expect(() => fromGeminiSchema({ type: 'OBJECT', properties: { a: { type: 'STRING', oneOf: [] } } }, 'tools[0].parameters')).toThrow(
      expect.objectContaining({ field: 'tools[0].parameters.properties.a.oneOf' }),
    )
    expect(() => fromGeminiSchema({ type: 'DATE' }, 'p')).toThrow(Refusal)
  })

  it('round-trips a subset schema', () => {
    const json = {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'n' },
        age: { type: ['integer', 'null'] },
        kind: { type: 'string', enum: ['a', 'b'] },
      },
      required: ['name'],
    }
    const gemini = toGeminiSchema(json)
    expect(gemini).toBeDefined()
    expect(fromGeminiSchema(gemini, 'p')).toEqual(json)
  })
})
