import { readFileSync, writeFileSync } from 'node:fs'
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
 * A full collection, then another after a pause: V8 frees array buffers (and sweeps) on other threads after a
 * collection returns, so one read right after it counted megabytes already let go.
 */
async function settled(): Promise<NodeJS.MemoryUsage> {
  collect()
  await new Promise((resolve) => setTimeout(resolve, 50))
  collect()
  return process.memoryUsage()
}

/**
 * The memory `work` leaves held once it resolved, above what was held before it, garbage collected both times: what
 * it keeps (a copy queued per reader), not what it passed through.
 */
export async function heldGrowth<T>(work: () => Promise<T>): Promise<{ result: T; arrayBuffers: number; heap: number; rss: number }> {
  const base = await settled()
  const result = await work()
  const now = await settled()
  return { result, arrayBuffers: now.arrayBuffers - base.arrayBuffers, heap: now.heapUsed - base.heapUsed, rss: now.rss - base.rss }
}

/** A process's resident set size and its high-water mark, in bytes, from procfs. */
export function residentOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024
  return { rss: field('VmRSS'), hwm: field('VmHWM') }
}

/**
 * The most resident memory process `pid` held while `work` runs, above what it held when it started: the kernel's
 * high-water mark, reset first where the kernel lets it be, else sampled every few milliseconds.
 */
export async function peakResidentGrowth<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const base = residentOf(pid).rss
  let reset = true
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
  } catch {
    reset = false
  }
  let peak = base
  const sample = setInterval(() => {
    peak = Math.max(peak, residentOf(pid).rss)
  }, 2)
  try {
    const result = await work()
    const { rss, hwm } = residentOf(pid)
    return { result, growth: Math.max(peak, rss, reset ? hwm : 0) - base }
  } finally {
    clearInterval(sample)
  }
}
