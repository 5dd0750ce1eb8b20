// Answers held to the end of the event-loop turn. A peer reading on loopback (or a proxy before the gateway) is woken
// by each write that finds it asleep, and the wake-up is paid inside the writer's syscall: answers made at once, one
// per request read, each woke a reader that had gone back to sleep while the next request was served. Written
// together once the turn has read everything it could, a burst of such answers reaches a reader already awake.

const waiting: Array<() => void> = []

function wakeAll(): void {
  // What waits resumes in the microtasks after this callback: every write of the turn, back to back.
  for (const resume of waiting.splice(0)) resume()
}

/** Resolves in this turn's check phase, after every request the turn read, together with every other wait of it. */
export function turnEnd(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.push(resolve) === 1) setImmediate(wakeAll)
  })
}
