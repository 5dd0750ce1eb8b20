import type { createHash as CreateHash, hash as Hash } from 'node:crypto'

/** What the hashing needs of `node:crypto`. */
export interface HashFunctions {
  createHash: typeof CreateHash
  hash: typeof Hash
}

/**
 * The canonical JSON form of SPEC 4.3 and its truncated sha256, as one self-contained function of `node:crypto`:
 * it refers to nothing outside itself, so a worker thread can run the very same code from its source
 * (`canonicalHashing.toString()`), with no second copy to drift and no separate file to ship.
 */
export function canonicalHashing({ createHash, hash: hashOnce }: HashFunctions) {
  const stringify = JSON.stringify
  const isArray = Array.isArray
  const keysOf = Object.keys
  const protoOf = Object.getPrototypeOf
  const objectProto = Object.prototype

  // V8's JSON.stringify recurses on the native stack and dies a few thousand levels down, depending
  // on how deep the caller already is; past this depth the explicit-stack walker is used instead.
  const NATIVE_MAX_DEPTH = 500

  // Past this depth the walker remembers its ancestors, so a cyclic object (never produced by
  // JSON.parse, but a caller may hand one over) fails loudly instead of eating all memory.
  const CYCLE_CHECK_DEPTH = 2000

  // A replacer key list makes JSON.stringify look up every listed key on every object; when the
  // document holds many distinct keys that costs more than walking by hand.
  const KEY_LIST_COST_FACTOR = 4
  const KEY_LIST_COST_SLACK = 4096

  interface NativePlan {
    /** Every object already lists its keys in canonical order, so plain JSON.stringify is canonical. */
    sorted: boolean
    /** All keys of the subtree in canonical order: the replacer list that makes JSON.stringify canonical. */
    keys: string[]
  }

  // Pushed after a container's children in planNative; popping it means the walk left that container.
  const LEAVE: object = {}

  /**
   * Decides whether V8's native serializer can produce the canonical form of a container, several
   * times faster than any walk in JavaScript. Given a property list, JSON.stringify emits every
   * object's keys in the list's order whatever their kind (ECMA-262 SerializeJSONObject), so
   * integer-like keys keep code-unit order. Not usable when a `__proto__` key exists (objects
   * without one would serialize the inherited accessor), when something is not plain JSON data,
   * or when the nesting is deep enough to overflow the native stack.
   */
  function planNative(value: object): NativePlan | null {
    const nodes: object[] = [value]
    const seen = new Set<string>()
    let previous: string[] = []
    let sorted = true
    let depth = 0
    let objects = 0
    let totalKeys = 0
    while (nodes.length > 0) {
      const node = nodes.pop() as object
      if (node === LEAVE) {
        depth--
        continue
      }
      if (++depth > NATIVE_MAX_DEPTH) return null
      nodes.push(LEAVE)
      if (isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const item: unknown = node[i]
          const type = typeof item
          if (type === 'object') {
            if (item !== null) nodes.push(item as object)
          } else if (type !== 'string' && type !== 'number' && type !== 'boolean') return null
        }
        continue
      }
      const proto: unknown = protoOf(node)
      if (proto !== objectProto && proto !== null) return null
      const record = node as Record<string, unknown>
      // for-in walks V8's enum cache without allocating; siblings usually share one shape, so keys
      // are only added and order-checked from the first one that differs from the last object's.
      let same = true
      let count = 0
      let last = ''
      for (const key in record) {
        if (same && key !== previous[count]) same = false
        if (!same) {
          if (key === '__proto__') return null
          seen.add(key)
          if (count > 0 && !(last < key)) sorted = false
        }
        last = key
        count++
        const item = record[key]
        const type = typeof item
        if (type === 'object') {
          if (item !== null) nodes.push(item as object)
        } else if (type !== 'string' && type !== 'number' && type !== 'boolean') return null
      }
      if (!same || count !== previous.length) previous = keysOf(record)
      objects++
      totalKeys += count
    }
    if (sorted) return { sorted, keys: [] }
    if (objects * seen.size > KEY_LIST_COST_FACTOR * totalKeys + KEY_LIST_COST_SLACK) return null
    for (const key of seen) {
      // An object lacking a listed key serializes whatever it inherits under that name; only
      // methods (skipped by JSON.stringify) are expected there, anything else is a polluted prototype.
      const inherited: unknown = (objectProto as Record<string, unknown>)[key]
      if (inherited !== undefined && typeof inherited !== 'function') return null
    }
    // Default sort compares UTF-16 code units, which is RFC 8785's order.
    return { sorted, keys: [...seen].sort() }
  }

  function notJson(what: string): TypeError {
    return new TypeError(`canonicalJson: ${what} is not a JSON value`)
  }

  /** Sorts a short key list in place by UTF-16 code units; object key lists are small and mostly sorted. */
  function sortKeys(keys: string[]): void {
    const n = keys.length
    if (n > 16) {
      keys.sort()
      return
    }
    for (let i = 1; i < n; i++) {
      const key = keys[i] as string
      let j = i - 1
      if ((keys[j] as string) < key) continue
      while (j >= 0 && (keys[j] as string) > key) {
        keys[j + 1] = keys[j] as string
        j--
      }
      keys[j + 1] = key
    }
  }

  function enter(ancestors: Set<unknown> | null, container: unknown): Set<unknown> {
    const set = ancestors ?? new Set()
    if (set.has(container)) throw new TypeError('canonicalJson: value contains a cycle')
    set.add(container)
    return set
  }

  /**
   * The general walker: explicit stack (no recursion limit), keys sorted per object. It follows
   * JSON.stringify for values JSON cannot hold (undefined, functions and symbols are dropped from
   * objects and become null in arrays; non-finite numbers become null), so both paths agree.
   */
  function walk(value: unknown): string {
    let out = ''
    // One frame per open container: the container, its sorted keys (null for arrays), the index reached.
    const containers: unknown[] = []
    const keyLists: (string[] | null)[] = []
    const indexes: number[] = []
    let depth = 0
    let ancestors: Set<unknown> | null = null
    const keyCache = new Map<string, string>()
    const keyPrefix = (key: string): string => {
      let text = keyCache.get(key)
      if (text === undefined) {
        text = `${stringify(key)}:`
        keyCache.set(key, text)
      }
      return text
    }

    let current: unknown = value
    for (;;) {
      // Emit `current`; a non-empty container opens a frame and continues with its first child.
      switch (typeof current) {
        case 'string':
          out += stringify(current)
          break
        case 'number':
          out += Number.isFinite(current) ? String(current) : 'null'
          break
        case 'boolean':
          out += current ? 'true' : 'false'
          break
        case 'object': {
          if (current === null) {
            out += 'null'
            break
          }
          if (isArray(current)) {
            if (current.length === 0) {
              out += '[]'
              break
            }
            if (depth >= CYCLE_CHECK_DEPTH) ancestors = enter(ancestors, current)
            out += '['
            containers[depth] = current
            keyLists[depth] = null
            indexes[depth] = 0
            depth++
            current = current[0]
            continue
          }
          const record = current as Record<string, unknown>
          let keys = keysOf(record)
          for (let i = 0; i < keys.length; i++) {
            const type = typeof record[keys[i] as string]
            if (type === 'undefined' || type === 'function' || type === 'symbol') {
              keys = keys.filter((key) => {
                const t = typeof record[key]
                return t !== 'undefined' && t !== 'function' && t !== 'symbol'
              })
              break
            }
          }
          if (keys.length === 0) {
            out += '{}'
            break
          }
          if (depth >= CYCLE_CHECK_DEPTH) ancestors = enter(ancestors, record)
          sortKeys(keys)
          const first = keys[0] as string
          out += `{${keyPrefix(first)}`
          containers[depth] = record
          keyLists[depth] = keys
          indexes[depth] = 0
          depth++
          current = record[first]
          continue
        }
        case 'undefined':
        case 'function':
        case 'symbol':
          // Only reachable at the top or inside an array: objects drop such keys up front.
          if (depth === 0) throw notJson(typeof current)
          out += 'null'
          break
        default:
          throw notJson(typeof current)
      }
      // Close finished containers and move to the next sibling.
      for (;;) {
        if (depth === 0) return out
        const top = depth - 1
        const container = containers[top]
        const keys = keyLists[top]
        const next = (indexes[top] as number) + 1
        if (keys === null) {
          const array = container as unknown[]
          if (next < array.length) {
            indexes[top] = next
            out += ','
            current = array[next]
            break
          }
          out += ']'
        } else {
          const list = keys as string[]
          if (next < list.length) {
            indexes[top] = next
            const key = list[next] as string
            out += `,${keyPrefix(key)}`
            current = (container as Record<string, unknown>)[key]
            break
          }
          out += '}'
        }
        if (ancestors !== null) ancestors.delete(container)
        containers[top] = undefined
        keyLists[top] = null
        depth = top
      }
    }
  }

  const isSkipped = (value: unknown): boolean => typeof value === 'undefined' || typeof value === 'function' || typeof value === 'symbol'

  /** Canonical form of one value: natively when planNative allows it, else by the walker. */
  function canonicalValue(value: unknown): string {
    if (typeof value !== 'object' || value === null) {
      const type = typeof value
      // A finite number is written as String writes it (ECMA-262 SerializeJSONProperty), without a native call.
      if (type === 'number') return Number.isFinite(value) ? String(value) : 'null'
      if (type === 'string' || type === 'boolean' || value === null) return stringify(value) as string
      return walk(value)
    }
    const plan = planNative(value)
    if (plan !== null) {
      try {
        return plan.sorted ? (stringify(value) as string) : stringify(value, plan.keys)
      } catch (error) {
        // The caller's own stack may leave less room than NATIVE_MAX_DEPTH assumed.
        if (!(error instanceof RangeError)) throw error
      }
    }
    return walk(value)
  }

  // Pieces at least this long are handed to the hash on their own instead of being concatenated:
  // hashing a 20 MB string in one update first encodes it into one 20 MB buffer, while slices of
  // this size are encoded into cache-sized buffers and hash about twice as fast.
  const HASH_CHUNK = 65536

  /**
   * The canonical form as a few pieces whose concatenation is the canonical string: the hash
   * consumes them one by one, so the large members of a body are never copied into one string.
   */
  function canonicalPieces(value: unknown): string[] {
    return membersPieces(value, null)[0]
  }

  /**
   * The pieces of the whole value and, from the same pass, of the value without the top-level members named in
   * `omit` (which then must be a plain object): two hashes of one body for the price of one canonical form.
   */
  function canonicalPiecesWithout(value: unknown, omit: readonly string[]): [all: string[], without: string[]] {
    return membersPieces(value, omit) as [string[], string[]]
  }

  function membersPieces(value: unknown, omit: readonly string[] | null): [string[], string[] | undefined] {
    if (typeof value !== 'object' || value === null || isArray(value)) return [[canonicalValue(value)], undefined]
    const proto: unknown = protoOf(value)
    if (proto !== objectProto && proto !== null) return [[walk(value)], undefined]
    // A request body is an object whose top-level keys (model, stream, tools...) rarely recur
    // below; serializing each member with its own key list keeps JSON.stringify's lists short.
    const record = value as Record<string, unknown>
    const keys = keysOf(record)
    sortKeys(keys)
    const pieces: string[] = []
    const kept: string[] | undefined = omit === null ? undefined : []
    let out = '{'
    let keptOut = '{'
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      const member = record[key]
      if (isSkipped(member)) continue
      const head = `${stringify(key)}:`
      const text = canonicalValue(member)
      const keep = kept !== undefined && !(omit as readonly string[]).includes(key)
      // `out` is '{' only before its first member; a large member goes alone (never copied into a longer string).
      out += out === '{' ? head : `,${head}`
      if (keep) keptOut += keptOut === '{' ? head : `,${head}`
      if (text.length < HASH_CHUNK) {
        out += text
        if (keep) keptOut += text
      } else {
        pieces.push(out, text)
        out = ''
        if (keep) {
          kept.push(keptOut, text)
          keptOut = ''
        }
      }
    }
    pieces.push(`${out}}`)
    kept?.push(`${keptOut}}`)
    return [pieces, kept]
  }

  /** RFC 8785-style canonical JSON of a parsed value; the hash rule of SPEC 4.3 is defined over it. */
  function canonicalJson(value: unknown): string {
    const pieces = canonicalPieces(value)
    return pieces.length === 1 ? (pieces[0] as string) : pieces.join('')
  }

  /** The truncated sha256 of the pieces' concatenation: `length` characters of it in `encoding` (16 hex by default). */
  function hashPieces(pieces: string[], encoding: 'hex' | 'base64url' = 'hex', length = 16): string {
    // A body's canonical form is mostly one short piece: hashed in one call, without a Hash object (most of the cost).
    const only = pieces.length === 1 ? (pieces[0] as string) : undefined
    if (only !== undefined && only.length < HASH_CHUNK) return hashOnce('sha256', only, encoding).slice(0, length)
    const hash = createHash('sha256')
    for (const piece of pieces) {
      const n = piece.length
      let start = 0
      while (start < n) {
        let end = start + HASH_CHUNK
        if (end >= n) end = n
        else {
          // Never split a surrogate pair: each half alone would be encoded as U+FFFD.
          const unit = piece.charCodeAt(end - 1)
          if (unit >= 0xd800 && unit <= 0xdbff) end++
        }
        hash.update(start === 0 && end === n ? piece : piece.slice(start, end), 'utf8')
        start = end
      }
    }
    return hash.digest(encoding).slice(0, length)
  }

  return { canonicalJson, canonicalPieces, canonicalPiecesWithout, hashPieces, sortKeys }
}
