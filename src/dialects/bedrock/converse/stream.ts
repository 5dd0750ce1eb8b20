// ConverseStream's events read into the hub. The event stream's frames reach here as SSE whose `data` is the event
// under its type (`{"contentBlockDelta":{…}}`, as the AWS SDKs present them); an exception is `{"exception":…}`.

import { isObject } from '../../../json/value.js'
import type { StreamDecoder } from '../../../translate/format.js'
import type { HubStreamEvent } from '../../../translate/hub.js'
import { finishOf, usageOf } from './response.js'

/** Reads ConverseStream's events; tool calls are numbered by their content block. */
export class ConverseStreamDecoder implements StreamDecoder {
  private started = false

  event(data: string): HubStreamEvent[] {
    const parsed: unknown = JSON.parse(data)
    if (!isObject(parsed)) return []
    const out: HubStreamEvent[] = []
    if (!this.started) {
      this.started = true
      out.push({ type: 'meta', id: undefined, model: undefined, created: undefined })
    }
    const { contentBlockStart: start, contentBlockDelta: delta, messageStop: stop, metadata, exception } = parsed
    if (isObject(start) && isObject(start.start) && isObject(start.start.toolUse)) {
      const { toolUseId, name } = start.start.toolUse
      out.push({
        type: 'tool_call',
        choice: 0,
        index: Number(start.contentBlockIndex ?? 0),
        id: String(toolUseId),
        name: String(name),
        args: '',
        signature: undefined,
      })
    }
    if (isObject(delta) && isObject(delta.delta)) {
      const index = Number(delta.contentBlockIndex ?? 0)
      const { text, toolUse, reasoningContent } = delta.delta
      if (typeof text === 'string') out.push({ type: 'text', choice: 0, text })
      if (isObject(toolUse) && typeof toolUse.input === 'string') {
        out.push({ type: 'tool_call', choice: 0, index, id: undefined, name: undefined, args: toolUse.input, signature: undefined })
      }
      if (isObject(reasoningContent)) {
        const signature = typeof reasoningContent.signature === 'string' ? reasoningContent.signature : undefined
        const redacted = typeof reasoningContent.redactedContent === 'string'
        const thought = typeof reasoningContent.text === 'string' ? reasoningContent.text : ''
        out.push({
          type: 'reasoning',
          choice: 0,
          text: thought,
          signature: redacted ? String(reasoningContent.redactedContent) : signature,
          redacted,
        })
      }
    }
    if (isObject(stop)) {
      const finish = finishOf(stop.stopReason)
      if (finish) out.push({ type: 'finish', choice: 0, finish })
    }
    if (isObject(metadata)) {
      const usage = usageOf(metadata.usage)
      if (usage) out.push({ type: 'usage', usage })
    }
    if (isObject(exception)) {
      const status = typeof exception.status === 'number' ? exception.status : 500
      const message = typeof exception.message === 'string' ? exception.message : 'The upstream stream failed.'
      out.push({
        type: 'error',
        status,
        error: { message, code: typeof exception.type === 'string' ? exception.type : undefined, param: undefined },
      })
    }
    return out
  }
}
