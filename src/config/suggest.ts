/** Edit distance between two short names (case-insensitive), for "did you mean" hints. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const current = [i]
    for (let j = 1; j <= y.length; j++) {
      const substitution = (previous[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution)
    }
    previous = current
  }
  return previous[y.length] as number
}

/**
 * The known name closest to `name`, when it is close enough to be a typo: within a third of its length, or a known
 * name it begins (`timeout` → `timeouts`, `maxRequest` → `maxRequestBytes`).
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  const lower = name.toLowerCase()
  for (const candidate of known) {
    const c = candidate.toLowerCase()
    const d = c.startsWith(lower) ? 0.5 : distance(name, candidate)
    if (d < bestDistance) {
      bestDistance = d
      best = candidate
    }
  }
  return bestDistance <= Math.max(2, Math.ceil(name.length / 3)) ? best : undefined
}
