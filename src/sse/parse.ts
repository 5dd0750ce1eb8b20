/** The `data` of each event in a run of server-sent event text, in order; events without data are skipped. */
export function eventData(text: string): string[] {
  const out: string[] = []
  for (const event of text.split(/\r?\n\r?\n/)) {
    // Several `data:` lines of one event are joined with a line feed, as the SSE specification says.
    const lines: string[] = []
    for (const line of event.split(/\r?\n/)) {
      if (line.startsWith('data:')) lines.push(line.slice(line[5] === ' ' ? 6 : 5))
    }
    if (lines.length > 0) out.push(lines.join('\n'))
  }
  return out
}
