// A background call's events as kept and served: each numbered, framed as a server-sent event, and the place in the
// text of one that carries the call's object where that object's JSON lies.
import { sseJsonEvent } from '../sse/write.js'

/** One kept event as readers get it: its data numbered `seq` (`type` and `sequence_number` first, as OpenAI writes them). */
export function keptEvent(data: Record<string, unknown>, seq: number): string {
  const { type, ...rest } = data
  return sseJsonEvent(JSON.stringify({ type, sequence_number: seq, ...rest }), typeof type === 'string' ? type : undefined)
}

/** Put in an event's data in place of its object, to find where the event's text holds that object's JSON. */
const OBJECT_MARK = '\u0000object'

/**
 * Where `sse`, the text of `keptEvent(data, seq)`, holds the JSON of `object` (a member of `data`): found from the
 * same event written with a mark in the object's place, so the object's text is a slice of the event's, not a copy.
 */
export function objectSpan(sse: string, data: Record<string, unknown>, object: unknown, seq: number): [number, number] | undefined {
  const key = Object.keys(data).find((name) => name !== 'type' && data[name] === object)
  if (key === undefined) return undefined
  const marked = keptEvent({ ...data, [key]: OBJECT_MARK }, seq)
  const mark = JSON.stringify(OBJECT_MARK)
  const at = marked.indexOf(mark)
  return at < 0 ? undefined : [at, sse.length - (marked.length - at - mark.length)]
}

/** How many of the first `count` events a segment of at most `maxBytes` takes: at least one, however large. */
export function segmentLength(events: readonly string[], count: number, maxBytes: number): number {
  let take = 0
  for (let bytes = 0; take < count && (take === 0 || bytes + (events[take] as string).length <= maxBytes); take++)
    bytes += (events[take] as string).length
  return take
}
