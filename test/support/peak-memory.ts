import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

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

/** A full garbage collection, through V8's flag (vitest's workers do not expose `gc`). */
function collect(): void {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  gc()
}

/**
 * The memory `work` leaves held once it resolved, above what was held before it, garbage collected both times: what
 * it keeps (a copy queued per reader), not what it passed through.
 */
export async function heldGrowth<T>(work: () => Promise<T>): Promise<{ result: T; arrayBuffers: number; heap: number; rss: number }> {
  collect()
  const base = process.memoryUsage()
  const result = await work()
  collect()
  const now = process.memoryUsage()
  return { result, arrayBuffers: now.arrayBuffers - base.arrayBuffers, heap: now.heapUsed - base.heapUsed, rss: now.rss - base.rss }
}
