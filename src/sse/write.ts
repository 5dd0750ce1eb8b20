/**
 * One server-sent event carrying `data`, named `event` when given. Each line of the payload gets its own `data:`
 * field, so the reader's join (with a line feed, as the SSE specification says) gives the payload back exactly.
 */
export function sseEvent(data: string, event?: string): string {
  return sseJsonEvent(data.replace(/\r\n|\r|\n/g, '\ndata: '), event)
}

/**
 * `sseEvent` of a payload of one line, such as a `JSON.stringify` result (JSON text holds no raw line break): a
 * megabyte event is then copied once when first read, not also by a search for line breaks that finds none.
 */
export function sseJsonEvent(json: string, event?: string): string {
  return event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`
}

/** Whether the bytes written last end an event (a blank line, after `\n` or `\r\n` line ends). */
export const endsEvent = (last: Buffer) => /\n\r?\n$/.test(last.subarray(-4).toString('latin1'))
