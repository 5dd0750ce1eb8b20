/**
 * One server-sent event carrying `data`. Each line of the payload gets its own `data:` field, so the reader's join
 * (with a line feed, as the SSE specification says) gives the payload back exactly.
 */
export function sseEvent(data: string): string {
  return `data: ${data.replace(/\r\n|\r|\n/g, '\ndata: ')}\n\n`
}
