import type { ClientFraming } from './framing.js'

const CONTENT_TYPE = 'text/event-stream'

/**
 * Server-Sent Events: `data:` lines, events ended by a blank line, numbered by `id:` lines for `Last-Event-ID`
 * resume; a comment line is the keep-alive every SSE parser skips.
 */
export const sse: ClientFraming = {
  name: 'sse',
  contentType: CONTENT_TYPE,
  headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  keepAlive: Buffer.from(': keep-alive\n\n'),
}
