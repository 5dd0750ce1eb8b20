// JSON Schema ⇄ Gemini `Schema` (an OpenAPI 3.0 subset).
//
// Toward Gemini the subset is tried first, because every Gemini model accepts it. A schema the subset cannot say
// without loss (recursive `$ref`, `oneOf`/`allOf`/`not`, open `additionalProperties`, tuples, non-string enums,
// several non-null types, …) is sent whole in the JSON Schema fields newer Gemini models take instead
// (`parametersJsonSchema`, `responseJsonSchema`); the upstream is then the judge of what it supports.
// Rewrites that keep the meaning: `type: [T, "null"]` and `anyOf: [.., {type: "null"}]` become `nullable`; a local
// non-recursive `$ref` is inlined; `const` becomes a one-value enum; `additionalProperties: false` is dropped,
// since Gemini never generates undeclared properties.

import { isObject } from '../../json/value.js'
import type { JsonSchema } from '../../translate/hub.js'
import { array, at, camelKeys, integer, isStrings, type JsonObject, number, object, refuse, string } from '../../translate/readers.js'
import type { GeminiSchema } from './generate-content/wire.js'

const GEMINI_TYPES: Readonly<Record<string, string>> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
}

/** Keywords that carry no constraint and can be left out without changing what is valid. */
const DROPPABLE = new Set(['$schema', '$comment', '$id'])

/** Keywords copied as they are: same name, same meaning in both vocabularies. */
const SAME = new Set(['format', 'title', 'description', 'pattern', 'minimum', 'maximum', 'default'])
const COUNTS = new Set(['minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength'])

/** Why a schema has no exact subset form; never shown to clients, it only selects the JSON Schema field. */
class NotInSubset extends Error {}

const notInSubset = (): never => {
  throw new NotInSubset()
}

interface Walk {
  defs: JsonObject
  expanding: Set<string>
}

function resolveRef(ref: unknown, walk: Walk): [string, JsonObject] {
  if (typeof ref !== 'string') return notInSubset()
  const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref)
  const name = match?.[1]
  if (name === undefined || walk.expanding.has(name)) return notInSubset()
  const target = walk.defs[name]
  return isObject(target) ? [name, target] : notInSubset()
}

const isNullSchema = (value: unknown) => isObject(value) && value.type === 'null' && Object.keys(value).length === 1

function subset(schema: unknown, walk: Walk): GeminiSchema {
  if (!isObject(schema)) return notInSubset()
  if (schema.$ref !== undefined) {
    const { $ref, ...siblings } = schema
    const [name, target] = resolveRef($ref, walk)
    walk.expanding.add(name)
    const inlined = subset({ ...target, ...siblings }, walk)
    walk.expanding.delete(name)
    return inlined
  }
  const out: GeminiSchema = {}
  let nullable = schema.nullable === true
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPABLE.has(key) || key === 'nullable' || key === '$defs' || key === 'definitions') continue
    if (key === 'additionalProperties' && value === false) continue
    if (key === 'type') continue
    if (SAME.has(key)) {
      Object.assign(out, { [key]: value })
    } else if (COUNTS.has(key)) {
      if (typeof value !== 'number') notInSubset()
      Object.assign(out, { [key]: value })
    } else if (key === 'enum' || key === 'const') {
      const values: unknown[] = key === 'const' ? [value] : Array.isArray(value) ? value : notInSubset()
      const strings = values.filter((v): v is string => typeof v === 'string')
      const nulls = values.filter((v) => v === null).length
      if (strings.length + nulls !== values.length) notInSubset()
      if (nulls > 0) nullable = true
      out.enum = strings
    } else if (key === 'required') {
      out.required = isStrings(value) ? value : notInSubset()
    } else if (key === 'properties') {
      const members = isObject(value) ? value : notInSubset()
      out.properties = Object.fromEntries(Object.entries(members).map(([name, sub]) => [name, subset(sub, walk)]))
    } else if (key === 'items') {
      out.items = subset(value, walk)
    } else if (key === 'anyOf') {
      const all: unknown[] = Array.isArray(value) && value.length > 0 ? value : notInSubset()
      const branches = all.filter((branch) => !isNullSchema(branch))
      if (branches.length < all.length) nullable = true
      if (branches.length === 1) Object.assign(out, subset(branches[0], walk))
      else out.anyOf = branches.map((branch) => subset(branch, walk))
    } else {
      notInSubset()
    }
  }
  const type = schema.type
  if (type !== undefined) {
    const types: unknown[] = Array.isArray(type) ? type : [type]
    const concrete = types.filter((t) => t !== 'null')
    if (concrete.length < types.length) nullable = true
    if (concrete.length !== 1) notInSubset()
    const mapped = GEMINI_TYPES[String(concrete[0])]
    if (mapped === undefined) notInSubset()
    out.type = mapped
  } else if (out.enum !== undefined) {
    out.type = 'STRING'
  } else if (out.anyOf === undefined && out.type === undefined) {
    // "Anything" has no subset form: the subset always needs a type.
    notInSubset()
  }
  if (out.enum !== undefined && out.type !== 'STRING') notInSubset()
  if (out.type === 'OBJECT' && out.properties !== undefined && Object.keys(out.properties).length === 0) notInSubset()
  if (nullable) out.nullable = true
  return out
}

/**
 * The Gemini subset form of a JSON Schema, or undefined when it has none that means the same: the caller then
 * sends the JSON Schema as it is, in the field that takes full JSON Schema.
 */
export function toGeminiSchema(schema: JsonSchema): GeminiSchema | undefined {
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) }
  try {
    return subset(schema, { defs, expanding: new Set() })
  } catch (error) {
    if (error instanceof NotInSubset) return undefined
    throw error
  }
}

/** True when a parameters schema declares no parameters at all, which Gemini wants as no `parameters` field. */
export function declaresNothing(schema: JsonSchema): boolean {
  const rest = Object.keys(schema).filter((key) => !['type', 'properties', 'additionalProperties', 'required', '$schema'].includes(key))
  const properties = schema.properties
  return (
    rest.length === 0 &&
    schema.type === 'object' &&
    (properties === undefined || (isObject(properties) && Object.keys(properties).length === 0)) &&
    (schema.additionalProperties === undefined || schema.additionalProperties === false) &&
    (schema.required === undefined || (Array.isArray(schema.required) && schema.required.length === 0))
  )
}

function count(value: unknown, path: string): number {
  // The API's int64 counts arrive as strings in JSON.
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value)
  return integer(value, path)
}

/** A Gemini `Schema` from a client, as JSON Schema; a keyword outside the documented subset is refused by path. */
export function fromGeminiSchema(value: unknown, path: string): JsonSchema {
  const schema = camelKeys(object(value, path), path)
  const out: JsonObject = {}
  let type: string | undefined
  for (const [key, member] of Object.entries(schema)) {
    const where = at(path, key)
    if (key === 'type') {
      const name = string(member, where).toLowerCase()
      if (name !== 'type_unspecified') {
        if (!Object.hasOwn(GEMINI_TYPES, name) && name !== 'null') refuse(where, `'${where}' is not a Gemini schema type.`)
        type = name
      }
    } else if (key === 'format' || key === 'title' || key === 'description' || key === 'pattern') {
      out[key] = string(member, where)
    } else if (key === 'minimum' || key === 'maximum') {
      out[key] = number(member, where)
    } else if (COUNTS.has(key)) {
      out[key] = count(member, where)
    } else if (key === 'enum' || key === 'required' || key === 'propertyOrdering') {
      const list = array(member, where).map((item, i) => string(item, at(where, i)))
      if (key !== 'propertyOrdering') out[key] = list
    } else if (key === 'items') {
      out.items = fromGeminiSchema(member, where)
    } else if (key === 'anyOf') {
      out.anyOf = array(member, where).map((branch, i) => fromGeminiSchema(branch, at(where, i)))
    } else if (key === 'properties') {
      out.properties = properties(object(member, where), schema.propertyOrdering, where)
    } else if (key === 'default') {
      out.default = member
    } else if (key === 'example') {
      out.examples = [member]
    } else if (key !== 'nullable') {
      refuse(where, `'${where}' is not a keyword of the Gemini schema subset this gateway translates.`)
    }
  }
  const nullable = schema.nullable === true
  if (type !== undefined) out.type = nullable && type !== 'null' ? [type, 'null'] : type
  if (nullable && Array.isArray(out.enum)) out.enum = [...out.enum, null]
  if (nullable && type === undefined && Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }]
  return out
}

/** Properties in `propertyOrdering` order first: models that honour key order (OpenAI's) then generate them so. */
function properties(members: JsonObject, ordering: unknown, path: string): JsonObject {
  const order = (isStrings(ordering) ? ordering : []).filter((name) => Object.hasOwn(members, name))
  const names = [...order, ...Object.keys(members).filter((name) => !order.includes(name))]
  return Object.fromEntries(names.map((name) => [name, fromGeminiSchema(members[name], at(path, name))]))
}
