import type { Readable } from 'node:stream'
import type { UpstreamResponse } from './send.js'

/** Reads an upstream body to its end and drops it, so the connection goes back to the pool; never rejects. */
export async function drain(body: Readable | Buffer): Promise<void> {
  // A body read whole already holds no connection.
  if (Buffer.isBuffer(body)) return
  try {
    for await (const _ of body) {
      // Nothing to keep: an answer that is being replaced by another attempt.
    }
  } catch {
    // A broken body of a discarded answer changes nothing.
  }
}

/** The wait an upstream asked for, in ms (`retry-after-ms`, or `retry-after` in seconds or as a date); undefined if none. */
export function retryAfterMs(headers: UpstreamResponse['headers']): number | undefined {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)
  const ms = Number(first(headers['retry-after-ms']))
  if (Number.isFinite(ms) && ms >= 0) return ms
  const text = first(headers['retry-after'])
  if (text === undefined) return undefined
  const seconds = Number(text)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}
