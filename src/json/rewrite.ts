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
