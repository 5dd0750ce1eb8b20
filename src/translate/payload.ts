// One description per wire payload: its members, each with the reader that checks it. The payload's TS type, the
// members translation accepts and the members the gateway itself reads all come from that one list, so they cannot
// drift apart. Members are read lazily, one at a time, where the translation needs them: the refusal a body gets is
// the one the code reaches first, as with the bare readers.
import { absent, at, type JsonObject, object, onlyKnown, optional } from './readers.js'

/** A reader of one value: the value, or a `Refusal` naming `path`. */
export type Reader<T> = (value: unknown, path: string) => T

/** One member of a payload: how its value is taken from the body (`undefined` when an optional member is absent). */
export interface Field<V> {
  /** Member `key` of `body`, found at `path`: a refusal names the member, as the bare readers do. */
  take(body: JsonObject, key: string, path: string): V
  /** Whether the gateway reads or checks the member itself (so a body may carry it only once). */
  readonly gatewayReads: boolean
  /** Whether the member only hints the provider: translation drops it and names it, whatever its value. */
  readonly hint: boolean
  /** Whether the member must be present: its reader refuses an absent one. */
  readonly required: boolean
}

/** What a field says besides its reader. */
export interface FieldOptions {
  /** The gateway reads or checks the member before any translation (the operation's `readFields`). @default false */
  gatewayReads?: boolean
}

/** A required member: an absent one is refused by `read` as any wrong value is. */
export function field<T>(read: Reader<T>, options: FieldOptions = {}): Field<T> {
  return {
    take: (body, key, path) => read(body[key], at(path, key)),
    gatewayReads: options.gatewayReads === true,
    hint: false,
    required: true,
  }
}

/** An optional member: absent and JSON `null` both read as undefined, as in `optional`. */
export function optionalField<T>(read: Reader<T>, options: FieldOptions = {}): Field<T | undefined> {
  return {
    take: (body, key, path) => optional(body, key, path, read),
    gatewayReads: options.gatewayReads === true,
    hint: false,
    required: false,
  }
}

/**
 * A member that only hints the provider (a cache key, metadata, a storage flag): it changes nothing the model says,
 * so translation drops it rather than refuse the call, and names it (see `Payload.hinted`). Its value is not read.
 */
export function hintField(): Field<unknown> {
  return { take: (body, key) => body[key], gatewayReads: false, hint: true, required: false }
}

/** A payload's description: its fields, and the sets derived from them. */
export interface Payload<V> {
  /** The members as described: the payload's TS type is read back from them. */
  readonly fields: { readonly [K in keyof V]: Field<V[K]> }
  /** Every member name: anything else is refused by `object` (see `onlyKnown`). */
  readonly known: ReadonlySet<string>
  /** The members the gateway reads itself: each may appear once in a body (an operation's `readFields`). */
  readonly gatewayReads: ReadonlySet<string>
  /** The members that only hint the provider. */
  readonly hints: ReadonlySet<string>
  /** The paths of the hint members `body` (found at `path`) sets (null is unset), in its order: what a translation drops. */
  hinted(body: JsonObject, path?: string): string[]
  /** The object at `path` (its names normalised), refused if it is not one or has a member this payload does not list. */
  object(value: unknown, path: string): JsonObject
  /** Member `key` of `body` (the payload found at `path`), checked by its field's reader. */
  read<K extends keyof V & string>(body: JsonObject, key: K, path?: string): V[K]
}

/** What a payload says besides its members. */
export interface PayloadOptions {
  /**
   * Normalises an object's member names before they are checked: Google's protobuf JSON takes snake_case and
   * lowerCamelCase alike (see `camelKeys`). @default the names as sent
   */
  keys?: (body: JsonObject, path: string) => JsonObject
}

/** Describes a payload by its members; their value types are inferred from the readers. */
export function payload<V>(fields: { readonly [K in keyof V]: Field<V[K]> }, options: PayloadOptions = {}): Payload<V> {
  const keys = options.keys
  const members: [string, Field<unknown>][] = Object.entries(fields)
  const known: ReadonlySet<string> = new Set(members.map(([key]) => key))
  const hints: ReadonlySet<string> = new Set(members.filter(([, member]) => member.hint).map(([key]) => key))
  return {
    fields,
    known,
    gatewayReads: new Set(members.filter(([, member]) => member.gatewayReads).map(([key]) => key)),
    hints,
    hinted: (body, path = '') =>
      hints.size === 0
        ? []
        : Object.keys(body)
            .filter((key) => hints.has(key) && !absent(body[key]))
            .map((key) => at(path, key)),
    object(value, path) {
      const body = keys ? keys(object(value, path), path) : object(value, path)
      onlyKnown(body, known, path)
      return body
    },
    read: (body, key, path = '') => fields[key].take(body, key, path),
  }
}

/** Keys of `V` whose reads can be undefined: the optional members (and any read as `unknown`, which says nothing). */
type OptionalKeys<V> = { [K in keyof V]-?: undefined extends V[K] ? K : never }[keyof V]

/** The TS type of a payload that passes every read: required members as read, optional ones with `?`. */
export type PayloadType<P> =
  P extends Payload<infer V>
    ? { [K in Exclude<keyof V, OptionalKeys<V>>]: V[K] } & { [K in OptionalKeys<V>]?: Exclude<V[K], undefined> }
    : never
