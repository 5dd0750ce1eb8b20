/** The most array-buffer memory seen while `work` runs, above what was held when it started. */
export async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const base = process.memoryUsage().arrayBuffers
  let peak = base
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers)
  }, 2)
  try {
    const result = await work()
    return { result, growth: peak - base }
  } finally {
    clearInterval(sample)
  }
}
