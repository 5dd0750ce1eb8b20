// Route patterns: the paths the dialects declare, with named parameters (`/items/{id}/run`), matched without a
// regular expression or an allocation for a path that is not theirs (matching runs on every request).

/** The values a matched path gave a pattern's parameters, by name; raw, never percent-decoded. */
export type PathParams = Readonly<Record<string, string>>

/**
 * A path pattern: literal text with named parameters in braces. A parameter holds one or more characters up to the
 * first occurrence of the character that follows it in the pattern, so `/items/{id}:run` reads an id without `:`
 * (which may hold `/`), and `/items/{id}/run` one without `/` (which may hold `.` and `:`); a parameter
 * that ends the pattern holds the rest of the path. Two parameters never touch.
 */
export class PathPattern {
  /** The pattern as written. */
  readonly source: string
  /** The literal text before the first parameter: the whole pattern when it has none. */
  readonly head: string
  /** Parameter names, in order. */
  readonly names: readonly string[]
  /** The literal after each parameter (`''` after a last one that ends the pattern). */
  readonly #tails: readonly string[]

  constructor(source: string) {
    const names: string[] = []
    const literals: string[] = []
    let from = 0
    for (;;) {
      const open = source.indexOf('{', from)
      if (open === -1) break
      const close = source.indexOf('}', open)
      if (close === -1) throw new Error(`route pattern ${source}: unclosed {`)
      const name = source.slice(open + 1, close)
      if (!/^[A-Za-z_]\w*$/.test(name)) throw new Error(`route pattern ${source}: bad parameter name {${name}}`)
      if (names.includes(name)) throw new Error(`route pattern ${source}: {${name}} twice`)
      literals.push(source.slice(from, open))
      names.push(name)
      from = close + 1
    }
    literals.push(source.slice(from))
    for (let i = 1; i < literals.length - 1; i++) {
      if (literals[i] === '') throw new Error(`route pattern ${source}: two parameters touch`)
    }
    this.source = source
    this.head = literals[0] as string
    this.names = names
    this.#tails = literals.slice(1)
  }

  /** Whether the pattern has no parameter (matched by its text alone). */
  get fixed(): boolean {
    return this.names.length === 0
  }

  /** The parameters of `path` (without its query) when it matches, else undefined. */
  match(path: string): PathParams | undefined {
    if (!path.startsWith(this.head)) return undefined
    if (this.names.length === 0) return path.length === this.head.length ? {} : undefined
    const params: Record<string, string> = {}
    let at = this.head.length
    for (let i = 0; i < this.names.length; i++) {
      const tail = this.#tails[i] as string
      let end: number
      if (tail === '') end = path.length
      else {
        end = path.indexOf(tail[0] as string, at)
        if (end === -1 || !path.startsWith(tail, end)) return undefined
      }
      if (end === at) return undefined
      params[this.names[i] as string] = path.slice(at, end)
      at = end + tail.length
    }
    return at === path.length ? params : undefined
  }
}
