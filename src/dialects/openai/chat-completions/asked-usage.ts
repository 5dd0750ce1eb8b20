// A chat stream's usage, asked of the upstream on the client's behalf: every stream is metered, and a chat upstream
// reports usage only when asked (`stream_options.include_usage`). What the client did not ask for is taken out of
// the stream again (the usage chunk, and each chunk's `"usage":null`), so its bytes are what it would have got.
import { isObject } from '../../../json/value.js'
import type { AskedUsage, RequestBytes } from '../../dialect.js'

const OPEN = Buffer.from('{"stream_options":{"include_usage":true},')

/** The request asking for usage, or undefined when the client asked for it itself (or does not stream). */
function ask(body: RequestBytes): Buffer | undefined {
  const options = body.fields.stream_options
  if (isObject(options) && options.include_usage === true) return undefined
  if (options === undefined) {
    // Spliced in at the start: the client's own bytes follow, untouched.
    const at = body.bytes.indexOf(0x7b)
    if (at === -1) return undefined
    const rest = body.bytes.subarray(at + 1)
    const empty = /^\s*\}/.test(rest.subarray(0, 64).toString('latin1'))
    return Buffer.concat([OPEN.subarray(0, empty ? OPEN.length - 1 : OPEN.length), rest])
  }
  const merged = JSON.stringify({ ...(isObject(options) ? options : {}), include_usage: true })
  const span = body.spans?.get('stream_options')
  if (span) return Buffer.concat([body.bytes.subarray(0, span[0]), Buffer.from(merged), body.bytes.subarray(span[1])])
  const value = body.value ?? (JSON.parse(body.bytes.toString('utf8')) as Record<string, unknown>)
  return Buffer.from(JSON.stringify({ ...value, stream_options: JSON.parse(merged) }))
}

const NULL_LAST = ',"usage":null}'

/** One event of the stream as the client would have got it; undefined for the usage chunk it never asked for. */
function strip(event: string): string | undefined {
  const start = event.indexOf('data:')
  if (start === -1) return event
  const end = event.trimEnd().length
  const data = event.slice(start + 5, end).trim()
  // Where OpenAI puts it: last.
  if (data.endsWith(NULL_LAST)) return `${event.slice(0, start)}data: ${data.slice(0, -NULL_LAST.length)}}${event.slice(end)}`
  let chunk: unknown
  try {
    chunk = JSON.parse(data)
  } catch {
    return event
  }
  if (!isObject(chunk) || !('usage' in chunk)) return event
  if (chunk.usage !== null && Array.isArray(chunk.choices) && chunk.choices.length === 0) return undefined
  if (chunk.usage !== null) return event
  const { usage: _, ...rest } = chunk
  return `${event.slice(0, start)}data: ${JSON.stringify(rest)}${event.slice(end)}`
}

/** Chat completions' usage on request. */
export const chatAskedUsage: AskedUsage = { ask, strip }
