// Reading untrusted wire JSON with the path of every value at hand, so a refusal can name the exact field.
import { isObject } from '../json/value.js'

/** A value the translation produced, or why it could not: the field at fault, in the source body's own terms. */
export type Translated<T> = { ok: true; value: T } | { ok: false; field: string; message: string }

/** A JSON object as read from a body. */
export type JsonObject = Record<string, unknown>

/**
 * Thrown inside a translator and caught once at its boundary (see `attempt`): the mapping code reads as a plain
 * sequence of field reads instead of a result check after every one.
 */
export class Refusal extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message)
    this.name = 'Refusal'
  }
}

/** Refuses the field at `path` with a message for the client. */
export function refuse(path: string, message: string): never {
  throw new Refusal(path, message)
}

/** Refuses a field whose value the target format has no way to express. */
export function inexpressible(path: string, what: string): never {
  throw new Refusal(path, `'${path}' ${what}; the upstream's format cannot express it.`)
}

/** Runs a translation, turning a refusal into a failed result; any other error is a bug and propagates. */
export function attempt<T>(run: () => T): Translated<T> {
  try {
    return { ok: true, value: run() }
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, field: error.field, message: error.message }
    throw error
  }
}

/** The path of a member of the object at `path`. */
export const at = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`

/** The members of an array, or none when the value is not one (for lenient reads of upstream answers). */
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

/** True for an array of strings. */
export const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string')

/** The object at `path`, or a refusal. */
export function object(value: unknown, path: string): JsonObject {
  if (!isObject(value)) refuse(path, `'${path}' must be an object.`)
  return value
}

/** The array at `path`, or a refusal. */
export function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) refuse(path, `'${path}' must be an array.`)
  return value
}

/** The string at `path`, or a refusal. */
export function string(value: unknown, path: string): string {
  if (typeof value !== 'string') refuse(path, `'${path}' must be a string.`)
  return value
}

/** The finite number at `path`, or a refusal. */
export function number(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse(path, `'${path}' must be a number.`)
  return value
}

/** The integer at `path`, or a refusal. */
export function integer(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) refuse(path, `'${path}' must be an integer.`)
  return value
}

/** A reader of a finite number from `min` to `max`: one of another type is refused as `number` refuses it. */
export function numberFrom(min: number, max: number): (value: unknown, path: string) => number {
  return (value, path) => {
    const found = number(value, path)
    if (found < min || found > max) refuse(path, `'${path}' must be a number from ${min} to ${max}.`)
    return found
  }
}

/** A reader of an integer of at least `least`: one of another type is refused as `integer` refuses it. */
export function integerFrom(least: number): (value: unknown, path: string) => number {
  return (value, path) => {
    const found = integer(value, path)
    if (found < least) refuse(path, `'${path}' must be an integer of at least ${least}.`)
    return found
  }
}

/** The boolean at `path`, or a refusal. */
export function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') refuse(path, `'${path}' must be a boolean.`)
  return value
}

/** The array of strings at `path`, or a refusal naming the first member that is not one. */
export function strings(value: unknown, path: string): string[] {
  return array(value, path).map((item, i) => string(item, at(path, i)))
}

/** Any value, unchecked: for a member the translation checks its own way (text or a list, a value refused unless neutral). */
export const unchecked = (value: unknown): unknown => value

/** JSON `null` and absence mean the same in both formats: the default. */
export const absent = (value: unknown): value is null | undefined => value === undefined || value === null

/** Reads an optional member with `read`, or undefined when it is absent or null. */
export function optional<T>(body: JsonObject, key: string, path: string, read: (value: unknown, path: string) => T): T | undefined {
  const value = body[key]
  return absent(value) ? undefined : read(value, at(path, key))
}

/**
 * Refuses the first member of `body` that `known` does not list. Across formats an unknown field cannot be passed
 * on (the other API would reject it or, worse, ignore it), so it is named rather than dropped.
 */
export function onlyKnown(body: JsonObject, known: ReadonlySet<string>, path: string): void {
  for (const key of Object.keys(body)) {
    if (!known.has(key)) refuse(at(path, key), `'${at(path, key)}' is not a field this gateway can translate for the upstream's format.`)
  }
}

/** Sets `key` only when `value` is defined, so built wire objects carry no `undefined` members. */
export function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value
}

/** The value of a JSON text, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The object with its snake_case keys in lowerCamelCase. Google's APIs parse protobuf JSON, which takes a field by
 * either name (its documentation uses both: `system_instruction`, `inline_data`), so a reader normalises each
 * message level it reads — never free-form maps such as function arguments or schema property names.
 */
export function camelKeys(value: JsonObject, path: string): JsonObject {
  if (!Object.keys(value).some((key) => key.includes('_'))) return value
  const out: JsonObject = {}
  for (const [key, member] of Object.entries(value)) {
    const name = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(key) ? key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : key
    if (Object.hasOwn(out, name)) refuse(at(path, name), `'${at(path, name)}' is given twice (in snake_case and camelCase).`)
    out[name] = member
  }
  return out
}
