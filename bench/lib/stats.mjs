// Order statistics over plain number arrays. Percentiles use the nearest-rank rule, so a p99 of
// 1 000 samples is an observed sample, never an interpolation between two.

/** @param {number[]} values @param {number} p 0..100 */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1]
}

/** @param {number[]} values */
export function median(values) {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Median and spread of per-round values: the spread is max − min across rounds, the honest width
 * on a shared machine where a quartile of three rounds means nothing.
 * @param {number[]} values
 */
export function summary(values) {
  const finite = values.filter((v) => Number.isFinite(v))
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 }
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length }
}

/** Nanoseconds (bigint) to milliseconds (number). @param {bigint} ns */
export function ms(ns) {
  return Number(ns) / 1e6
}
