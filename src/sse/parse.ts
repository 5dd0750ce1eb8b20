import { decodeInSlices, SliceTurns } from '../http/join-chunks.js'

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
 * The `data` of one event larger than a slice (a whole answer in one event), found in its bytes and decoded a slice
 * at a time: what `pushData` finds in its text.
 */
async function bigEventData(event: Buffer, turns: SliceTurns): Promise<string | undefined> {
  const lines: string[] = []
  for (let start = 0; start <= event.length; ) {
    const feed = event.indexOf(0x0a, start)
    let end = feed < 0 ? event.length : feed
    // Lines end at `\n` or `\r\n`, as `pushData` splits them.
    if (feed >= 0 && end > start && event[end - 1] === 0x0d) end--
    if (end - start >= 5 && event.toString('latin1', start, start + 5) === 'data:') {
      const from = Math.min(end, start + (event[start + 5] === 0x20 ? 6 : 5))
      lines.push((await decodeInSlices(event, from, end, turns)).text)
    }
    start = feed < 0 ? event.length + 1 : feed + 1
  }
  if (lines.length === 0) return undefined
  return lines.length === 1 ? lines[0] : lines.join('\n')
}

/**
 * The `data` of each of `events` (whole events, one buffer each, as a stream log hands them), with a turn of the event
 * loop after each `DATA_SLICE_BYTES`: what `eventData` gives for their text, without one pass over a large stream, nor
 * over a large event.
 */
export async function eventDataInSlices(events: Iterable<Buffer>): Promise<string[]> {
  const out: string[] = []
  const turns = new SliceTurns(DATA_SLICE_BYTES)
  for (const event of events) {
    if (event.length > DATA_SLICE_BYTES) {
      const data = await bigEventData(event, turns)
      if (data !== undefined) out.push(data)
      continue
    }
    pushData(out, event.toString('utf8'))
    await turns.spent(event.length)
  }
  return out
}
