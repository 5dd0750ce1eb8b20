// The body scanner's entry points; the byte state machine is in grammar.ts, what it keeps in skeleton.ts.

import { Scanner } from './grammar.js'
import type { JsonRules } from './inspect.js'

/** Re-exported so importers need not know which part of the scanner defines it. */
export { BIG_STRING } from './skeleton.js'

/** How long a value's text may be for the skeleton to hold it exactly (`ScanOptions.smallValueBytes`' default). */
export const SMALL_VALUE_BYTES = 64 * 1024

/** A scanned body: its skeleton, and where its exact top-level strings lie. */
export interface ScannedBody {
  fields: Record<string, unknown>
  spans: ReadonlyMap<string, readonly [number, number]>
}

/** Options of a scan. */
export interface ScanOptions {
  sliceBytes?: number
  smallValueBytes?: number
  exactStrings?: readonly string[]
  rules?: JsonRules
  /**
   * Whether a skeleton is built. Without one the body is only checked (grammar, rules) and `fields` is empty:
   * for a caller that reads none of its members, a body of many small objects then costs no object per member.
   * @default true
   */
  skeleton?: boolean
  /**
   * Members of the object elements of top-level arrays whose type validation reads (`role` of `messages[i]`): an
   * element of a big array is summed up by these alone. @default none
   */
  elementFields?: readonly string[]
}

/**
 * Validates a request body as JSON and returns a skeleton of it: a stand-in for the parsed object that holds
 * only what validation reads (`validateChat`, `validateGenerateContent`), with big values left out.
 *
 * - The whole body is checked against the JSON grammar exactly as `JSON.parse` of its UTF-8 text accepts it,
 *   without recursion (any nesting depth), in slices of `sliceBytes` (default 256 KiB) with a turn of the event
 *   loop between slices. An invalid body, or one that is not an object, throws the GatewayError that
 *   `parseJsonObject` throws (the messages begin alike; the invalid-JSON one names the reason and byte offset).
 * - Every top-level member is present (last duplicate wins; `__proto__` is an own property, as with JSON.parse).
 *   A value whose text spans at most `smallValueBytes` (default 64 KiB, at least 5) is parsed, hence exact; so
 *   are all numbers (a longer one is read from its first 800 significant digits, still exactly), booleans, null
 *   and the empty string. A bigger string is `BIG_STRING`. A bigger array holds one entry per element: a string,
 *   number, literal or array is its parsed value when small, else `BIG_STRING` (string) or `[]` (array); an object
 *   element is parsed while the array's text so far spans at most `smallValueBytes`, and past that it is a shared,
 *   frozen summary holding only the members named in `elementFields`, each a stand-in of its type (`''`, `{}`,
 *   `[]`, `0`, `true`, `false`, `null`), the last duplicate winning. A bigger top-level object is a skeleton
 *   object: its members parsed when small, `BIG_STRING` for big strings, big arrays and objects left out.
 *   Members whose key spans more than 64 KiB (or `smallValueBytes` if larger) are left out.
 *
 * The skeleton is for validation only: values standing in for big data (`BIG_STRING`, `[]`, left-out members,
 * partial objects) must never be forwarded, stored or logged as the body. Forward the original bytes. Validation
 * of a skeleton passes or fails exactly as on the parsed body, but a value it hands back can be a stand-in, except
 * for the top-level members named in `exactStrings`: a string there too big to keep is refused with a 400 naming
 * the member, so a stand-in never reaches code that reads the value (the `model` name).
 */
export async function scanJsonObject(bytes: Buffer, options?: ScanOptions): Promise<Record<string, unknown>> {
  return (await scanJsonBody(bytes, options)).fields
}

/** As `scanJsonObject`, with the spans of the exact strings, for rewriting them without decoding the body. */
export async function scanJsonBody(bytes: Buffer, options?: ScanOptions): Promise<ScannedBody> {
  const sliceBytes = Math.max(1, Math.floor(options?.sliceBytes ?? 256 * 1024))
  // Spans up to 5 bytes (all literals, the empty string) are always small.
  const small = Math.max(5, Math.floor(options?.smallValueBytes ?? SMALL_VALUE_BYTES))
  const rules = options?.rules
  const elementFields = options?.elementFields ?? []
  const scanner = new Scanner(
    bytes,
    small,
    new Set(options?.exactStrings),
    rules?.maxDepth ?? Number.POSITIVE_INFINITY,
    rules?.singleKeys ?? new Set(),
    rules !== undefined,
    options?.skeleton === false ? 0 : elementFields.length > 0 ? 3 : 2,
    elementFields,
  )
  const length = bytes.length
  for (let end = Math.min(length, sliceBytes); ; end = Math.min(length, end + sliceBytes)) {
    scanner.run(end)
    if (end === length) break
    await new Promise(setImmediate)
  }
  return { fields: scanner.finish(), spans: scanner.skeleton.spans }
}
