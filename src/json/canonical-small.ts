// The canonical form of a small parsed body, written in one recursive pass: for the few kilobytes of a typical call
// it costs half what the general writer does (canonical.ts), whose native serialisations pay a fixed price per call
// and a key list that is looked up on every object. It writes only what JSON.parse makes and gives way (undefined) on
// anything else, on deep nesting and on many values, where the general writer's rules and explicit stack take over.

const stringify = JSON.stringify
const objectProto = Object.prototype

/** Nesting past this gives way to the general writer (whose stack is explicit). */
const MAX_DEPTH = 64
/** Values past this give way to the general writer: a small body holds a few hundred. */
const MAX_VALUES = 4096

/** Strings up to this long are checked here for what JSON must escape; a longer one is left to the native writer. */
const SCANNED_STRING = 64

/** A string as JSON.stringify writes it: quoted as is when it holds nothing to escape (most names and short texts). */
function quoted(text: string): string {
  if (text.length > SCANNED_STRING) return stringify(text)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // Controls, a quote, a backslash, and any surrogate (a lone one is escaped): the native writer decides.
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return stringify(text)
  }
  return `"${text}"`
}

/** Members' written names (`"model":`), kept for the few hundred names bodies use; a name past them is written each time. */
const heads = new Map<string, string>()
const MAX_HEADS = 512

function headOf(key: string): string {
  let head = heads.get(key)
  if (head === undefined) {
    head = `${quoted(key)}:`
    if (heads.size < MAX_HEADS) heads.set(key, head)
  }
  return head
}

/** What a small-body writer is: the two forms it writes. */
export interface SmallCanonical {
  /** The canonical form of a small parsed JSON value (as canonical.ts writes it), or undefined where that writer must. */
  canonical(value: unknown): string | undefined
  /** The canonical forms of a small parsed object with and without its top-level `omit` members, or undefined. */
  canonicalWithout(record: Record<string, unknown>, omit: readonly string[]): [all: string, without: string] | undefined
}

/** The small-body writer, ordering keys with the general writer's `sortKeys` (one order for both). */
export function smallCanonicalWriter(sortKeys: (keys: string[]) => void): SmallCanonical {
  /** Values the current write may still visit. */
  let left = 0

  function write(value: unknown, depth: number): string | undefined {
    if (--left < 0) return undefined
    switch (typeof value) {
      case 'string':
        return quoted(value)
      case 'number':
        // Written as String writes a finite number (ECMA-262 SerializeJSONProperty); JSON.parse makes no other.
        return Number.isFinite(value) ? String(value) : undefined
      case 'boolean':
        return value ? 'true' : 'false'
      case 'object': {
        if (value === null) return 'null'
        if (depth >= MAX_DEPTH) return undefined
        if (Array.isArray(value)) {
          let out = '['
          for (let i = 0; i < value.length; i++) {
            const item = write(value[i], depth + 1)
            if (item === undefined) return undefined
            out += i === 0 ? item : `,${item}`
          }
          return `${out}]`
        }
        return writeObject(value as Record<string, unknown>, depth, undefined)?.[0]
      }
      default:
        return undefined
    }
  }

  /**
   * An object's canonical form and, with `omit`, the same object's without those members (one pass for both); undefined
   * for what the general writer must do: another prototype, a `__proto__` member, or a member given way on.
   */
  function writeObject(record: Record<string, unknown>, depth: number, omit: readonly string[] | undefined): [string, string] | undefined {
    if (Object.getPrototypeOf(record) !== objectProto) return undefined
    const keys = Object.keys(record)
    sortKeys(keys)
    let all = '{'
    let kept = '{'
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      if (key === '__proto__') return undefined
      const item = write(record[key], depth + 1)
      if (item === undefined) return undefined
      const member = headOf(key) + item
      all += i === 0 ? member : `,${member}`
      if (omit !== undefined && !omit.includes(key)) kept += kept === '{' ? member : `,${member}`
    }
    return [`${all}}`, `${kept}}`]
  }

  /** The canonical form of a small parsed JSON value (as canonical.ts writes it), or undefined where that writer must. */
  function smallCanonical(value: unknown): string | undefined {
    left = MAX_VALUES
    return write(value, 0)
  }

  /** The canonical forms of a small parsed object with and without its top-level `omit` members, or undefined. */
  function smallCanonicalWithout(record: Record<string, unknown>, omit: readonly string[]): [all: string, without: string] | undefined {
    left = MAX_VALUES
    return writeObject(record, 0, omit)
  }

  return { canonical: smallCanonical, canonicalWithout: smallCanonicalWithout }
}
