// Values built from a schema, so a model's tool call and JSON answer are valid against what the request declared.
// Reads JSON Schema and Gemini's OpenAPI subset alike (Gemini spells its types in capitals).

import { isObject } from '../json/value.js'
import type { JsonObject } from './shared.js'

/** The schema's type, lower-cased; the first non-null one of a type list. */
function typeOf(schema: JsonObject): string | undefined {
  const t = schema.type
  if (typeof t === 'string') return t.toLowerCase()
  if (Array.isArray(t)) {
    const named = t.find((x) => typeof x === 'string' && x.toLowerCase() !== 'null')
    return typeof named === 'string' ? named.toLowerCase() : 'null'
  }
  if (isObject(schema.properties)) return 'object'
  if (schema.items !== undefined) return 'array'
  return undefined
}

/**
 * A value valid against `schema`: `const` or the first `enum` value when given, the first alternative of
 * `anyOf`/`oneOf`, an object with each required property (every property when none is marked required), an
 * array of one item, and `'text'`, `1`, `1.5`, `true` for the scalars.
 */
export function sampleOf(schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 16) return null
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  for (const key of ['anyOf', 'oneOf']) {
    const options = schema[key]
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((o) => !(isObject(o) && typeOf(o) === 'null')) ?? options[0]
      return sampleOf(chosen, depth + 1)
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return sampleOf(Object.assign({}, ...schema.allOf.filter(isObject)), depth + 1)
  }
  switch (typeOf(schema)) {
    case 'object': {
      const props: JsonObject = isObject(schema.properties) ? schema.properties : {}
      const required = Array.isArray(schema.required)
        ? schema.required.filter((k): k is string => typeof k === 'string')
        : Object.keys(props)
      const out: JsonObject = {}
      for (const key of required) out[key] = sampleOf(props[key], depth + 1)
      return out
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? Math.max(1, schema.minItems) : 1
      return Array.from({ length: min }, () => sampleOf(schema.items, depth + 1))
    }
    case 'string':
      return 'text'
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1.5
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return null
  }
}

/** `mock.tool_arguments` when it is an object, else arguments built from `schema`. */
export function toolArguments(ctl: JsonObject, schema: unknown): JsonObject {
  if (isObject(ctl.tool_arguments)) return ctl.tool_arguments
  const args = sampleOf(schema)
  return isObject(args) ? args : {}
}

/** What the echo adds for the images a request carried: '' for none. */
export function imageNote(n: number): string {
  if (n === 0) return ''
  return n === 1 ? ' (1 image received)' : ` (${n} images received)`
}

/** The reply to tool results: `Tool said: <each result>`, joined by '; '. */
export const toolReply = (results: string[]): string => `Tool said: ${results.join('; ')}`
