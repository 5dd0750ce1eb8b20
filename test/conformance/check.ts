// Validation of what the gateway sent against the transcribed schemas: whole bodies, and every SSE event's data,
// with the stream rules the schemas alone cannot say. Every problem is a violation naming its case, where it was
// (the body, or the event's number and type) and the member's path; `quirks.ts` says which ones are known.
import type { z } from 'zod'
import * as anthropic from './schemas/anthropic.js'
import * as google from './schemas/google.js'
import * as openai from './schemas/openai.js'

/** One place where what was sent does not match its published shape. */
export interface Violation {
  /** The matrix case, e.g. `responses translated stream`. */
  case: string
  /** `body`, or `event 3 (response.created)`. */
  where: string
  /** The member at fault, dot-separated (`response.usage.input_tokens_details.cache_write_tokens`); `` for the whole. */
  path: string
  message: string
}

/** What the matrix sent and what it found. */
export class Tally {
  requests = 0
  bodies = 0
  events = 0
  readonly violations: Violation[] = []

  /** Checks `value` against `schema`, counting it as a body or an event. */
  check(name: string, where: string, schema: z.ZodType, value: unknown): void {
    if (where === 'body') this.bodies++
    else this.events++
    const result = schema.safeParse(value)
    if (result.success) return
    for (const issue of result.error.issues) this.add(name, where, issue.path.map(String).join('.'), issue.message)
  }

  /** Records a violation no schema states (a stream rule, a status that disagrees with its body). */
  add(name: string, where: string, path: string, message: string): void {
    this.violations.push({ case: name, where, path, message })
  }
}

/** One SSE event: its `event:` name, if any, and its `data:` lines joined. */
export interface SseEvent {
  event: string | undefined
  data: string
}

/** The data events of an event stream, in order; comments and id-only events are left out. */
export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = []
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined
    const data: string[] = []
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') })
  }
  return events
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/**
 * A chat stream: each chunk a `CreateChatCompletionStreamResponse`, `[DONE]` last; asked for usage, every chunk
 * carries `usage`, null except the last; not asked, none does. An error event has no shape in the spec: it is
 * reported as such and checked as an `ErrorResponse`.
 */
export function checkChatStream(tally: Tally, name: string, text: string, includeUsage: boolean): void {
  const events = sseEvents(text)
  const done = events.findIndex((event) => event.data === '[DONE]')
  const chunks = events.filter((event) => event.data !== '[DONE]').map((event) => parse(event.data))
  const failed = chunks.some((data) => isObject(data) && 'error' in data)
  if (!failed && done !== events.length - 1) tally.add(name, 'stream', '[DONE]', 'a chat stream ends with data: [DONE]')
  chunks.forEach((data, i) => {
    const where = `event ${i}`
    if (isObject(data) && 'error' in data) {
      tally.add(name, where, '', 'an error inside a chat stream: the spec has no shape for it')
      tally.check(name, where, openai.errorResponse, data)
      return
    }
    tally.check(name, where, openai.createChatCompletionStreamResponse, data)
    if (!isObject(data)) return
    if (!includeUsage) {
      if ('usage' in data) tally.add(name, where, 'usage', 'usage is present without stream_options.include_usage')
      return
    }
    // A stream that ended in an error has no usage chunk: every chunk it sent is one before it.
    const last = !failed && i === chunks.length - 1
    if (!('usage' in data)) tally.add(name, where, 'usage', 'usage is absent with stream_options.include_usage')
    else if (last && !isObject(data.usage)) tally.add(name, where, 'usage', 'the last chunk carries no usage')
    else if (!last && data.usage !== null) tally.add(name, where, 'usage', 'usage is not null before the last chunk')
  })
}

/** A Responses stream: each event one of `ResponseStreamEvent`, its `event:` line its `type`, numbered from 0 in order. */
export function checkResponsesStream(tally: Tally, name: string, text: string): void {
  sseEvents(text).forEach((event, i) => {
    const data = parse(event.data)
    const type = isObject(data) && typeof data.type === 'string' ? data.type : '?'
    const where = `event ${i} (${type})`
    tally.check(name, where, openai.responseStreamEvent, data)
    if (event.event !== type) tally.add(name, where, 'type', `the event line names '${event.event}', its data '${type}'`)
    if (isObject(data) && data.sequence_number !== i) tally.add(name, where, 'sequence_number', `expected ${i}`)
  })
}

/** A generate-content stream: each event a `GenerateContentResponse`, or the error envelope that ends it. */
export function checkGeminiStream(tally: Tally, name: string, text: string): void {
  sseEvents(text).forEach((event, i) => {
    const data = parse(event.data)
    const where = `event ${i}`
    tally.check(name, where, isObject(data) && 'error' in data ? google.errorEnvelope : google.generateContentResponse, data)
  })
}

/** A Google-shaped error: its envelope, and the HTTP status it went out with equal to its `error.code`. */
export function checkGoogleError(tally: Tally, name: string, status: number, body: unknown): void {
  tally.check(name, 'body', google.errorEnvelope, body)
  const code = isObject(body) && isObject(body.error) ? body.error.code : undefined
  if (code !== status) tally.add(name, 'body', 'error.code', `the HTTP status is ${status}, error.code ${String(code)}`)
}

/**
 * A Messages stream: each event one of the SDK's stream events, its `event:` line its `type`; `message_start` first,
 * then content blocks numbered from 0, each started, filled and stopped before the next starts, `message_delta`,
 * and `message_stop` last, unless an error event ends it (nothing after it). `ping` may come anywhere.
 */
export function checkMessagesStream(tally: Tally, name: string, text: string, requestId: string | undefined): void {
  const events = sseEvents(text)
  let open: number | undefined
  let started = 0
  let ended: string | undefined
  events.forEach((event, i) => {
    const data = parse(event.data)
    const type = isObject(data) && typeof data.type === 'string' ? data.type : '?'
    const where = `event ${i} (${type})`
    tally.check(name, where, anthropic.streamEvent, data)
    if (event.event !== type) tally.add(name, where, 'type', `the event line names '${event.event}', its data '${type}'`)
    if (ended !== undefined) tally.add(name, where, '', `an event after ${ended}`)
    if (i === 0 && type !== 'message_start') tally.add(name, where, 'type', 'a stream starts with message_start')
    if (!isObject(data) || type === 'ping') return
    if (type === 'error') {
      ended = 'the error event'
      checkRequestId(tally, name, where, requestId, data)
      return
    }
    const index = data.index
    if (type === 'content_block_start') {
      if (open !== undefined) tally.add(name, where, 'index', `block ${open} was not stopped`)
      if (index !== started) tally.add(name, where, 'index', `expected ${started}`)
      open = started++
    } else if (type === 'content_block_delta' || type === 'content_block_stop') {
      if (index !== open) tally.add(name, where, 'index', `no block ${String(index)} is open`)
      if (type === 'content_block_stop') open = undefined
    } else if (type === 'message_stop') ended = 'message_stop'
  })
  if (ended === undefined) tally.add(name, 'stream', 'message_stop', 'a stream ends with message_stop or an error event')
}

/** `request_id` of an Anthropic error: the one the `request-id` header says. */
function checkRequestId(tally: Tally, name: string, where: string, requestId: string | undefined, body: Record<string, unknown>): void {
  if (body.request_id !== requestId) {
    tally.add(name, where, 'request_id', `request_id is ${String(body.request_id)}, the request-id header ${String(requestId)}`)
  }
}

/** An Anthropic error: an ErrorResponse, its `request_id` the `request-id` header's. */
export function checkAnthropicError(tally: Tally, name: string, requestId: string | undefined, body: unknown): void {
  tally.check(name, 'body', anthropic.errorResponse, body)
  if (isObject(body)) checkRequestId(tally, name, 'body', requestId, body)
}
