/**
 * Runs `work` while counting turns of the event loop (a `setImmediate` chain) until it settles: how a test shows that
 * long work yields between its slices, by turns rather than by time.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0
  let running = true
  const tick = () => {
    turns++
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const result = await work()
    return { result, turns }
  } finally {
    running = false
  }
}
