/** The `data` of each event in a run of server-sent event text, in order; events without data are skipped. */
export function eventData(text: string): string[] {
  const out: string[] = []
  for (const event of text.split(/\r?\n\r?\n/)) pushData(out, event)
  return out
}

/** Adds the `data` of one event to `out`, if it has any. */
function pushData(out: string[], event: string): void {
  // Several `data:` lines of one event are joined with a line feed, as the SSE specification says.
  const lines: string[] = []
  for (const line of event.split(/\r?\n/)) {
    if (line.startsWith('data:')) lines.push(line.slice(line[5] === ' ' ? 6 : 5))
  }
  if (lines.length > 0) out.push(lines.join('\n'))
}

/** Event bytes read between two turns of the event loop by `eventDataInSlices`. */
const DATA_SLICE_BYTES = 1024 * 1024

/**
 * The `data` of each of `events` (whole events, one buffer each, as a stream log keeps them), with a turn of the event
 * loop after each `DATA_SLICE_BYTES`: what `eventData` gives for their text, without one pass over a large stream.
 */
export async function eventDataInSlices(events: readonly Buffer[]): Promise<string[]> {
  const out: string[] = []
  let sinceTurn = 0
  for (const event of events) {
    pushData(out, event.toString('utf8'))
    sinceTurn += event.length
    if (sinceTurn >= DATA_SLICE_BYTES) {
      sinceTurn = 0
      await new Promise(setImmediate)
    }
  }
  return out
}
