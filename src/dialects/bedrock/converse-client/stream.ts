// ConverseStream for a client: hub events written as Converse's events, kept as SSE whose `data` is the event under
// its type (`{"contentBlockDelta":{…}}`, the shape a Converse upstream's frames are read into, so the gateway keeps,
// journals and assembles one shape whichever upstream answered), then framed as AWS event-stream frames on the way
// out: the `:event-type` the type, the payload the event's JSON as is (ConverseStream's are not base64-wrapped).
import { sseEvent } from '../../../sse/write.js'
import type { CallPlan, SseOut, StreamEncoder } from '../../../translate/format.js'
import type { HubFinish, HubStreamEvent, HubUsage } from '../../../translate/hub.js'
import { parseJson } from '../../../translate/readers.js'
import type { ErrorFacts } from '../../dialect.js'
import type { SseFields } from '../../framing/writer.js'
import { streamExceptionType } from '../client-errors.js'
import type { FrameKind } from '../event-frame.js'
import { converseUsage, latencyOf, stopReasonOf } from './response.js'

/** The SSE event of a stream broken off: `exception`, with the status and (where an upstream said it) Bedrock's type. */
export function exceptionEvent(status: number, message: string, type?: string): SseOut {
  return { event: 'exception', data: JSON.stringify({ exception: { type, status, message } }) }
}

/** `OperationFormat.streamErrorEvent`: the gateway's own end of a broken stream, as the exception its clients raise. */
export function converseStreamErrorEvent(error: ErrorFacts): string {
  const out = exceptionEvent(error.status, error.message) as { event: string; data: string }
  return sseEvent(out.data, out.event)
}

/** The block being written: its kind, and for a tool call its number in the hub's terms. */
type Writing = { kind: 'text' } | { kind: 'reasoning' } | { kind: 'call'; hubIndex: number }

/**
 * Writes hub events as ConverseStream's: `messageStart` first, each part a content block numbered from 0 (a tool
 * call's opened by `contentBlockStart`, text and reasoning by their first delta, as Bedrock does), `messageStop`
 * at the finish and `metadata` with the usage at the end. One choice, the first.
 */
export class ConverseStreamEncoder implements StreamEncoder {
  private started = false
  private failed = false
  private stopped = false
  private blocks = 0
  private writing: Writing | undefined
  private usage: HubUsage | undefined

  constructor(private readonly plan: CallPlan) {}

  private emit(out: SseOut[], type: string, payload: object): void {
    out.push({ event: type, data: JSON.stringify({ [type]: payload }) })
  }

  private start(out: SseOut[]): void {
    if (this.started) return
    this.started = true
    this.emit(out, 'messageStart', { role: 'assistant' })
  }

  private close(out: SseOut[]): void {
    if (!this.writing) return
    this.writing = undefined
    this.emit(out, 'contentBlockStop', { contentBlockIndex: this.blocks - 1 })
  }

  private open(out: SseOut[], writing: Writing, start?: object): void {
    this.close(out)
    if (start !== undefined) this.emit(out, 'contentBlockStart', { contentBlockIndex: this.blocks, start })
    this.blocks++
    this.writing = writing
  }

  private delta(out: SseOut[], delta: object): void {
    this.emit(out, 'contentBlockDelta', { contentBlockIndex: this.blocks - 1, delta })
  }

  private stop(out: SseOut[], finish: HubFinish | undefined): void {
    if (this.stopped) return
    this.close(out)
    this.stopped = true
    this.emit(out, 'messageStop', { stopReason: stopReasonOf(finish) })
  }

  private event(event: HubStreamEvent, out: SseOut[]): void {
    switch (event.type) {
      case 'text':
      case 'refusal':
        if (event.text === '') return
        if (this.writing?.kind !== 'text') this.open(out, { kind: 'text' })
        this.delta(out, { text: event.text })
        return
      case 'reasoning':
        if (event.redacted) {
          this.open(out, { kind: 'reasoning' })
          this.delta(out, { reasoningContent: { redactedContent: event.signature ?? '' } })
          this.close(out)
          return
        }
        if (this.writing?.kind !== 'reasoning') this.open(out, { kind: 'reasoning' })
        if (event.text !== '') this.delta(out, { reasoningContent: { text: event.text } })
        if (event.signature !== undefined && event.signature !== '') {
          this.delta(out, { reasoningContent: { signature: event.signature } })
          this.close(out)
        }
        return
      case 'tool_call':
        if (this.writing?.kind !== 'call' || this.writing.hubIndex !== event.index) {
          const toolUseId = event.id ?? `tooluse_${this.plan.requestId}_${event.index}`
          this.open(out, { kind: 'call', hubIndex: event.index }, { toolUse: { toolUseId, name: event.name ?? '' } })
        }
        if (event.args !== '') this.delta(out, { toolUse: { input: event.args } })
        return
      case 'finish':
        this.stop(out, event.finish)
        return
      case 'usage':
        this.usage = event.usage
        return
      default:
        return
    }
  }

  events(batch: readonly HubStreamEvent[]): SseOut[] {
    const out: SseOut[] = []
    for (const event of batch) {
      if (this.failed) break
      if (event.type === 'error') {
        // Nothing follows an exception: the client cannot take the cut answer for a whole one.
        this.failed = true
        out.push(exceptionEvent(event.status, event.error.message, event.error.code))
        break
      }
      this.start(out)
      if (event.type === 'meta' || ('choice' in event && event.choice !== 0)) continue
      this.event(event, out)
    }
    return out
  }

  end(): SseOut[] {
    const out: SseOut[] = []
    if (this.failed) return out
    this.start(out)
    this.stop(out, undefined)
    this.emit(out, 'metadata', { usage: converseUsage(this.usage), metrics: latencyOf(this.plan) })
    return out
  }
}

/**
 * One kept SSE event as an event-stream frame: an `exception` event as the exception frame ConverseStream declares,
 * any other as the event of its name with the JSON under that name as its payload (sliced, not parsed, in the shape
 * the gateway keeps).
 */
export function converseFrame(fields: SseFields): { kind: FrameKind; payload: string } | undefined {
  const { event, data } = fields
  if (event === 'exception') {
    const parsed = parseJson(data) as { exception?: { type?: unknown; status?: unknown; message?: unknown } } | undefined
    const exception = parsed?.exception ?? {}
    const status = typeof exception.status === 'number' ? exception.status : 500
    const type = typeof exception.type === 'string' ? exception.type : undefined
    const message = typeof exception.message === 'string' ? exception.message : 'The model stream failed.'
    return { kind: { exception: streamExceptionType(status, type) }, payload: JSON.stringify({ message }) }
  }
  if (event === undefined) return undefined
  const head = `{${JSON.stringify(event)}:`
  if (data.startsWith(head) && data.endsWith('}')) return { kind: { event }, payload: data.slice(head.length, -1) }
  const parsed = parseJson(data) as Record<string, unknown> | undefined
  const payload = parsed?.[event]
  return payload === undefined ? undefined : { kind: { event }, payload: JSON.stringify(payload) }
}
