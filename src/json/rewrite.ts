/** Replaces the top-level string value of `key` in a JSON object text, keeping every other byte as sent. */
export function replaceTopLevelString(text: string, key: string, value: string): string {
  let depth = 0
  let i = 0
  let expectKey = false
  const n = text.length
  while (i < n) {
    const c = text[i]
    if (c === '"') {
      const start = i
      i++
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
      i++
      if (depth === 1 && expectKey) {
        expectKey = false
        if (JSON.parse(text.slice(start, i)) === key) {
          let j = i
          while (j < n && text[j] !== ':') j++
          j++
          while (j < n && /\s/.test(text[j] as string)) j++
          if (text[j] === '"') {
            let end = j + 1
            while (end < n && text[end] !== '"') end += text[end] === '\\' ? 2 : 1
            return text.slice(0, j) + JSON.stringify(value) + text.slice(end + 1)
          }
          i = j
        }
      }
      continue
    }
    if (c === '{') {
      depth++
      if (depth === 1) expectKey = true
    } else if (c === '[') {
      depth++
    } else if (c === '}' || c === ']') {
      depth--
    } else if (c === ',' && depth === 1) {
      expectKey = true
    }
    i++
  }
  return text
}

/** A path from the top of a JSON object to a value: member names, `*` for every element of an array. */
export type JsonPath = readonly string[]

const isSpace = (c: string | undefined) => c === ' ' || c === '\n' || c === '\r' || c === '\t'

/**
 * Replaces the string values at `paths` for which `replace` returns another string, keeping every other byte as
 * sent. `text` must be valid JSON (the body reader checked it); containers no path leads into are skipped unparsed.
 */
export function replaceStringsAt(text: string, paths: readonly JsonPath[], replace: (value: string) => string | undefined): string {
  const n = text.length
  let i = 0
  let out = ''
  let copied = 0
  const spaces = () => {
    while (isSpace(text[i])) i++
  }
  const skipString = () => {
    i++
    while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
  }
  // Skips one value whatever its depth, without recursion: a value no path leads into is never parsed.
  const skipValue = () => {
    let depth = 0
    do {
      const c = text[i]
      if (c === '"') skipString()
      else {
        if (c === '{' || c === '[') depth++
        else if (c === '}' || c === ']') depth--
        else if (depth === 0) {
          while (i < n && !isSpace(text[i]) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++
          return
        }
        i++
      }
    } while (depth > 0 && i < n)
  }
  // Recursion only as deep as the longest path.
  const value = (open: readonly JsonPath[], depth: number): void => {
    spaces()
    const c = text[i]
    if (open.length === 0) {
      skipValue()
      return
    }
    if (c === '"') {
      const start = i
      skipString()
      if (!open.some((path) => path.length === depth)) return
      const before = JSON.parse(text.slice(start, i)) as string
      const after = replace(before)
      if (after === undefined || after === before) return
      out += text.slice(copied, start) + JSON.stringify(after)
      copied = i
      return
    }
    if (c !== '{' && c !== '[') {
      skipValue()
      return
    }
    i++
    spaces()
    if (text[i] === '}' || text[i] === ']') {
      i++
      return
    }
    const inArray = c === '['
    for (;;) {
      spaces()
      let key = ''
      if (!inArray) {
        const keyStart = i
        skipString()
        key = JSON.parse(text.slice(keyStart, i)) as string
        spaces()
        i++ // the colon
      }
      const next = open.filter((path) => path.length > depth && (inArray ? path[depth] === '*' : path[depth] === key && key !== '*'))
      value(next, depth + 1)
      spaces()
      if (text[i++] !== ',') return
    }
  }
  value(paths, 0)
  return copied === 0 ? text : out + text.slice(copied)
}
