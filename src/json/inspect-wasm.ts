// `inspectJson`'s common case in WebAssembly (inspect.wat): a small body's bytes cost JavaScript about sixteen
// instructions each to read, and the module skips string text sixteen bytes at a time. It also says whether the body
// is all ASCII, which spares the body's UTF-8 check and decodes it as Latin-1 (the same text, decoded for less).
// Where the module cannot decide (a number that may overflow, an escaped top-level name, no WebAssembly), the
// verdict says so and `inspectJson` itself decides, so the two paths refuse and accept exactly the same bodies.

import { duplicateKey, inspectJson, type JsonRules, tooDeep } from './inspect.js'
import { INSPECT_WASM } from './inspect-wasm-bytes.js'

/** The body fits in the module's first page; a larger one is inspected by `inspectJson`. */
export const WASM_BODY_BYTES = 64 * 1024
/** The tables of single keys fill the second page. */
const TABLES_AT = WASM_BODY_BYTES
const TABLES_END = 2 * WASM_BODY_BYTES
/** A key longer than a table's length byte holds leaves its set to `inspectJson`. */
const MAX_KEY_BYTES = 255

/** A verdict's kinds (its low two bits). */
const KEPT = 0
const TOO_DEEP = 1
const REPEATED = 2
/** The module could not decide: `inspectJson` does. Also the verdict when the module is not used. */
export const DECIDE = 3
/** Set in a verdict of a body read to its end and found all ASCII (hence valid UTF-8). */
export const ALL_ASCII = 4

interface Inspector {
  inspect(n: number, maxDepth: number, table: number): number
  memory: Uint8Array
}

/** The instance, made on first use; null where WebAssembly (or its SIMD) is not available, as under `--jitless`. */
let inspector: Inspector | null | undefined

function instantiate(): Inspector | null {
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(INSPECT_WASM, 'base64')))
    const { inspect, memory } = instance.exports as unknown as { inspect: Inspector['inspect']; memory: WebAssembly.Memory }
    // The memory never grows, so this view stays valid.
    return { inspect, memory: new Uint8Array(memory.buffer) }
  } catch {
    return null
  }
}

/** Where each key set's table is in the module's memory; -1 for a set left to `inspectJson`. */
let tables = new WeakMap<ReadonlySet<string>, number>()
let tablesEnd = TABLES_AT

/** Writes the table of `keys` (a count, then each key's length and bytes, in the set's order); -1 when it cannot. */
function writeTable(keys: ReadonlySet<string>, memory: Uint8Array): number {
  const encoded = [...keys].map((key) => Buffer.from(key, 'utf8'))
  const size = 1 + encoded.reduce((sum, key) => sum + 1 + key.length, 0)
  if (encoded.length > 255 || encoded.some((key) => key.length > MAX_KEY_BYTES) || size > TABLES_END - TABLES_AT) return -1
  // The key sets are the operations' own, a handful: when they do not fit, the page starts over.
  if (tablesEnd + size > TABLES_END) {
    tables = new WeakMap()
    tablesEnd = TABLES_AT
  }
  const at = tablesEnd
  let p = at
  memory[p++] = encoded.length
  for (const key of encoded) {
    memory[p++] = key.length
    memory.set(key, p)
    p += key.length
  }
  tablesEnd = p
  return at
}

/**
 * The module's verdict on a body against `rules`, before it is parsed: `DECIDE` for a body it does not take (too
 * large, or no WebAssembly here), with `ALL_ASCII` set when it read the whole body and every byte was ASCII. Act on
 * it with `settleVerdict` once the body parsed, so that a body that is not JSON is refused as such first.
 */
export function quickVerdict(b: Uint8Array, rules: JsonRules): number {
  if (b.length > WASM_BODY_BYTES) return DECIDE
  if (inspector === undefined) inspector = instantiate()
  if (inspector === null) return DECIDE
  let table = tables.get(rules.singleKeys)
  if (table === undefined) {
    table = writeTable(rules.singleKeys, inspector.memory)
    tables.set(rules.singleKeys, table)
  }
  if (table === -1) return DECIDE
  inspector.memory.set(b, 0)
  // A body of the page's size nests no deeper than that: a larger limit would not fit the module's integers.
  return inspector.inspect(b.length, Math.min(rules.maxDepth, WASM_BODY_BYTES), table)
}

/** Refuses a parsed body as `inspectJson` would, from its verdict; where the module could not decide, runs it. */
export function settleVerdict(verdict: number, b: Buffer, rules: JsonRules): void {
  switch (verdict & 3) {
    case KEPT:
      return
    case TOO_DEEP:
      throw tooDeep(rules.maxDepth, verdict >>> 3)
    case REPEATED:
      throw duplicateKey([...rules.singleKeys][verdict >>> 3] as string)
    default:
      inspectJson(b, rules)
  }
}
