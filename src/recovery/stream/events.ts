import { EventSplitter } from '../../sse/split.js'

/** Whether an SSE event carries a `data` field: only those are numbered, resumed and counted by clients. */
export function hasData(event: Buffer): boolean {
  return event.indexOf('data:') === 0 || event.indexOf('\ndata:') !== -1
}

/** Splits a whole event stream (a record's `stream_raw`) into its events, a last unfinished one included. */
export function splitEvents(text: Buffer): Buffer[] {
  const splitter = new EventSplitter()
  const events = splitter.push(text)
  const rest = splitter.rest()
  if (rest && rest.length > 0) events.push(rest)
  return events
}
