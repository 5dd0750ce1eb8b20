// Markdown tables, printed as they are and copied verbatim into RESULTS.md.

/** @param {number} value @param {number} [digits] */
export function num(value, digits = 2) {
  if (value === undefined || value === null || !Number.isFinite(value)) return '—'
  return value.toFixed(digits)
}

/** `median (min–max)` of a summary. @param {{ median: number, min: number, max: number, n: number }} s */
export function spread(s, digits = 2, unit = '') {
  if (!s || !Number.isFinite(s.median)) return '—'
  if (s.n <= 1) return `${num(s.median, digits)}${unit}`
  return `${num(s.median, digits)}${unit} (${num(s.min, digits)}–${num(s.max, digits)})`
}

/** @param {number} value */
export function ratio(value, digits = 2) {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : '—'
}

export function mib(bytes, digits = 1) {
  return Number.isFinite(bytes) ? `${(bytes / 1048576).toFixed(digits)} MiB` : '—'
}

/** @param {string[]} header @param {Array<Array<string | number>>} rows */
export function table(header, rows) {
  const cells = [header, ...rows.map((row) => row.map(String))]
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => (row[i] ?? '').length)))
  const line = (row) => `| ${row.map((cell, i) => (cell ?? '').padEnd(widths[i])).join(' | ')} |`
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map((row) => line(row.map(String)))].join('\n')
}

/** A section: heading, optional note lines, table. */
export function section(title, notes, body) {
  return [`### ${title}`, '', ...notes.map((n) => `${n}`), notes.length ? '' : undefined, body, '']
    .filter((line) => line !== undefined)
    .join('\n')
}

/** Target verdicts, one line each. @param {Array<{ target: string, measured: string, ok: boolean | undefined }>} verdicts */
export function verdictTable(verdicts) {
  return table(
    ['target', 'measured', 'verdict'],
    verdicts.map((v) => [v.target, v.measured, v.ok === undefined ? 'not measured' : v.ok ? 'met' : 'MISSED']),
  )
}
