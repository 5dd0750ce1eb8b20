// Responses stream events from an upstream → hub stream events, one event at a time.

import { isObject } from '../../../json/value.js'
import type { StreamDecoder } from '../../../translate/format.js'
import { type HubStreamEvent, unreadable } from '../../../translate/hub.js'
import { type JsonObject, parseJson } from '../../../translate/readers.js'
import { chatErrorToHub } from '../chat-completions/response.js'
import { reasoningPart, responsesFinish, responsesUsageToHub } from './upstream-response.js'

/** Events that end a Responses stream with the whole response. */
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** A function call item being streamed: its number among the answer's calls, and whether its arguments came in deltas. */
interface StreamedCall {
  index: number
  streamed: boolean
}

/**
 * Reads a Responses stream: text and refusal deltas, function calls (opened by `output_item.added`, filled by
 * argument deltas, or whole at `done` from an upstream that sends no deltas), reasoning (summary or text deltas,
 * closed by the item's `done`, which carries its encrypted content), and the final response's end and usage.
 */
export class ResponsesStreamDecoder implements StreamDecoder {
  private started = false
  private readonly calls = new Map<number, StreamedCall>()
  /** Reasoning items whose text came in deltas: their `done` adds only the signature. */
  private readonly reasoned = new Set<number>()

  private meta(response: unknown, out: HubStreamEvent[]): void {
    if (this.started) return
    this.started = true
    const r = isObject(response) ? response : {}
    out.push({
      type: 'meta',
      id: typeof r.id === 'string' ? r.id : undefined,
      model: typeof r.model === 'string' ? r.model : undefined,
      created: typeof r.created_at === 'number' ? r.created_at : undefined,
    })
  }

  private call(event: JsonObject, item: JsonObject, out: HubStreamEvent[]): StreamedCall {
    const outputIndex = typeof event.output_index === 'number' ? event.output_index : -1
    let call = this.calls.get(outputIndex)
    if (!call) {
      call = { index: this.calls.size, streamed: false }
      this.calls.set(outputIndex, call)
      out.push({
        type: 'tool_call',
        choice: 0,
        index: call.index,
        id: typeof item.call_id === 'string' ? item.call_id : undefined,
        name: typeof item.name === 'string' ? item.name : undefined,
        args: '',
        signature: undefined,
      })
    }
    return call
  }

  /** A call's arguments given whole (in its `done` event or item), when no delta streamed them: sent once. */
  private wholeArguments(call: { index: number; streamed: boolean }, args: unknown, out: HubStreamEvent[]): void {
    if (call.streamed || typeof args !== 'string' || args === '') return
    call.streamed = true
    out.push({ type: 'tool_call', choice: 0, index: call.index, id: undefined, name: undefined, args, signature: undefined })
  }

  private itemDone(event: JsonObject, item: JsonObject, out: HubStreamEvent[]): void {
    if (item.type === 'function_call') {
      this.wholeArguments(this.call(event, item, out), item.arguments, out)
    } else if (item.type === 'reasoning') {
      const part = reasoningPart(item)
      if (!part) return
      const text = this.reasoned.has(Number(event.output_index)) ? '' : part.text
      // The signature closes the reasoning part the deltas opened; an unsigned one stays open to what follows.
      out.push({ type: 'reasoning', choice: 0, text, signature: part.signature === '' ? undefined : part.signature, redacted: false })
    }
    // A message item's text came in deltas: its `done` only repeats it.
  }

  private delta(event: JsonObject, out: HubStreamEvent[]): void {
    const delta = typeof event.delta === 'string' ? event.delta : ''
    if (delta === '') return
    switch (event.type) {
      case 'response.output_text.delta':
        out.push({ type: 'text', choice: 0, text: delta })
        return
      case 'response.refusal.delta':
        out.push({ type: 'refusal', choice: 0, text: delta })
        return
      case 'response.function_call_arguments.delta': {
        const call = this.call(event, {}, out)
        call.streamed = true
        out.push({ type: 'tool_call', choice: 0, index: call.index, id: undefined, name: undefined, args: delta, signature: undefined })
        return
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.reasoned.add(Number(event.output_index))
        out.push({ type: 'reasoning', choice: 0, text: delta, signature: undefined, redacted: false })
    }
  }

  private end(event: JsonObject, out: HubStreamEvent[]): void {
    const response = isObject(event.response) ? event.response : {}
    if (event.type === 'response.failed') {
      const usage = responsesUsageToHub(response.usage)
      if (usage) out.push({ type: 'usage', usage })
      out.push({ type: 'error', status: 500, error: chatErrorToHub({ error: isObject(response.error) ? response.error : {} }) })
      return
    }
    out.push({ type: 'finish', choice: 0, finish: responsesFinish(response, this.calls.size > 0) })
    const usage = responsesUsageToHub(response.usage)
    if (usage) out.push({ type: 'usage', usage })
  }

  event(data: string): HubStreamEvent[] {
    const event = parseJson(data)
    if (!isObject(event) || typeof event.type !== 'string') return [unreadable()]
    const out: HubStreamEvent[] = []
    if (event.type === 'error') {
      const error = chatErrorToHub({ error: event })
      out.push({ type: 'error', status: 500, error })
      return out
    }
    this.meta(event.response, out)
    if (FINAL.has(event.type)) this.end(event, out)
    else if (event.type === 'response.output_item.added' && isObject(event.item) && event.item.type === 'function_call')
      this.call(event, event.item, out)
    else if (event.type === 'response.output_item.done' && isObject(event.item)) this.itemDone(event, event.item, out)
    else if (event.type === 'response.function_call_arguments.done') this.wholeArguments(this.call(event, event, out), event.arguments, out)
    else this.delta(event, out)
    return out
  }
}
