// Hub stream events → Responses stream events, each typed (`event:` names its `type`) and numbered.

import { type Carried, PendingReasoning } from '../../../translate/carry.js'
import type { CallPlan, SseOut, StreamEncoder } from '../../../translate/format.js'
import type { HubFinish, HubStreamEvent, HubUsage } from '../../../translate/hub.js'
import {
  functionCallItem,
  incompleteReason,
  itemId,
  messageItem,
  namespaces,
  reasoningItem,
  responseId,
  responseObject,
  usageFromHub,
} from './response.js'
import type {
  ResponsesFunctionCallItem,
  ResponsesMessageItem,
  ResponsesOutputItem,
  ResponsesOutputPart,
  ResponsesResponse,
  ResponsesStreamEvent,
} from './wire.js'

/** The message being written: its item and which kind of part is open in it. */
interface OpenMessage {
  kind: 'message'
  item: ResponsesMessageItem
  index: number
  part: 'output_text' | 'refusal' | undefined
}

/** The function call being written; `hubIndex` is the call's number in the hub's terms, to join its fragments. */
interface OpenCall {
  kind: 'call'
  item: ResponsesFunctionCallItem
  index: number
  hubIndex: number
}

/**
 * Writes hub events as a Responses stream: `response.created` and `response.in_progress` first, then each output
 * item opened, filled with deltas and closed as OpenAI does, and at the end `response.completed` (or
 * `response.incomplete`) with the whole response and its usage. Every event carries its `sequence_number`, from 0.
 * A Responses answer has one output: events of other choices are left out (no Responses request asks for them).
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0
  private id: string
  private model: string
  private created: number
  private started = false
  private failed = false
  private readonly output: ResponsesOutputItem[] = []
  private open: OpenMessage | OpenCall | undefined
  private finish: HubFinish | undefined
  private usage: HubUsage | undefined
  private readonly declared: ReadonlySet<string>
  /** Reasoning not yet written: an item is written whole, once what follows it starts. */
  private readonly reasoning = new PendingReasoning()

  constructor(private readonly plan: CallPlan) {
    this.declared = namespaces(plan.request)
    this.id = responseId(undefined, plan)
    this.model = plan.model
    this.created = plan.created
  }

  private emit(out: SseOut[], event: ResponsesStreamEvent): void {
    // OpenAI writes `type` and `sequence_number` first; the rest keeps its order.
    const { type, ...rest } = event
    out.push({ event: type, data: JSON.stringify({ type, sequence_number: this.sequence++, ...rest }) })
  }

  private response(status: ResponsesResponse['status']): ResponsesResponse {
    const incomplete = status === 'in_progress' ? undefined : incompleteReason(this.finish)
    const usage = status === 'in_progress' || !this.usage ? undefined : usageFromHub(this.usage)
    return responseObject(this.plan, {
      id: this.id,
      model: this.model,
      created: this.created,
      status,
      incomplete,
      output: this.output,
      usage,
    })
  }

  private start(out: SseOut[]): void {
    if (this.started) return
    this.started = true
    this.emit(out, { type: 'response.created', response: this.response('in_progress') })
    this.emit(out, { type: 'response.in_progress', response: this.response('in_progress') })
  }

  private add(item: ResponsesOutputItem, out: SseOut[]): number {
    const index = this.output.length
    this.output.push(item)
    this.emit(out, { type: 'response.output_item.added', output_index: index, item })
    return index
  }

  private closePart(message: OpenMessage, out: SseOut[]): void {
    const content_index = message.item.content.length - 1
    const part = message.item.content[content_index]
    message.part = undefined
    if (!part) return
    const where = { item_id: message.item.id, output_index: message.index, content_index }
    if (part.type === 'output_text') this.emit(out, { type: 'response.output_text.done', ...where, text: part.text, logprobs: [] })
    else this.emit(out, { type: 'response.refusal.done', ...where, refusal: part.refusal })
    this.emit(out, { type: 'response.content_part.done', ...where, part })
  }

  private close(out: SseOut[]): void {
    const open = this.open
    this.open = undefined
    if (!open) return
    if (open.kind === 'message') this.closePart(open, out)
    else {
      const { id, name } = open.item
      this.emit(out, {
        type: 'response.function_call_arguments.done',
        item_id: id,
        output_index: open.index,
        name,
        arguments: open.item.arguments,
      })
    }
    open.item.status = 'completed'
    this.emit(out, { type: 'response.output_item.done', output_index: open.index, item: open.item })
  }

  /** The open message, with an open part of `kind`: the item and the part are opened (and others closed) as needed. */
  private messagePart(kind: 'output_text' | 'refusal', out: SseOut[]): OpenMessage {
    if (this.open?.kind === 'call') this.close(out)
    let message = this.open?.kind === 'message' ? this.open : undefined
    if (!message) {
      const item = messageItem(itemId('msg', this.id, this.output.length), 'in_progress')
      message = { kind: 'message', item, index: this.add(item, out), part: undefined }
      this.open = message
    }
    if (message.part === kind) return message
    if (message.part !== undefined) this.closePart(message, out)
    const part: ResponsesOutputPart =
      kind === 'output_text' ? { type: 'output_text', annotations: [], logprobs: [], text: '' } : { type: 'refusal', refusal: '' }
    message.item.content.push(part)
    message.part = kind
    const where = { item_id: message.item.id, output_index: message.index, content_index: message.item.content.length - 1 }
    this.emit(out, { type: 'response.content_part.added', ...where, part })
    return message
  }

  private text(kind: 'output_text' | 'refusal', text: string, out: SseOut[]): void {
    const message = this.messagePart(kind, out)
    const content_index = message.item.content.length - 1
    const part = message.item.content[content_index]
    const where = { item_id: message.item.id, output_index: message.index, content_index }
    if (part?.type === 'output_text') {
      part.text += text
      this.emit(out, { type: 'response.output_text.delta', ...where, delta: text, logprobs: [] })
    } else if (part?.type === 'refusal') {
      part.refusal += text
      this.emit(out, { type: 'response.refusal.delta', ...where, delta: text })
    }
  }

  /** Writes a whole reasoning item, closing what is open. */
  private reasoningItem(carried: Carried, out: SseOut[]): void {
    this.close(out)
    const item = reasoningItem(itemId('rs', this.id, this.output.length), carried)
    const index = this.add(item, out)
    this.emit(out, { type: 'response.output_item.done', output_index: index, item })
  }

  /** Writes the reasoning held, one item per part, before what comes next. */
  private flushReasoning(out: SseOut[]): void {
    for (const part of this.reasoning.take()) this.reasoningItem({ reasoning: [part], signature: undefined }, out)
  }

  private toolCall(event: HubStreamEvent & { type: 'tool_call' }, out: SseOut[]): void {
    let call = this.open?.kind === 'call' && this.open.hubIndex === event.index ? this.open : undefined
    if (!call) {
      this.close(out)
      if (event.signature !== undefined) this.reasoningItem({ reasoning: [], signature: event.signature }, out)
      const index = this.output.length
      const part = { id: event.id ?? `call_${this.id}_${index}`, name: event.name ?? '' }
      const item = functionCallItem(part, '', itemId('fc', this.id, index), 'in_progress', this.declared)
      call = { kind: 'call', item, index: this.add(item, out), hubIndex: event.index }
      this.open = call
    }
    if (event.args === '') return
    call.item.arguments += event.args
    this.emit(out, { type: 'response.function_call_arguments.delta', item_id: call.item.id, output_index: call.index, delta: event.args })
  }

  events(batch: readonly HubStreamEvent[]): SseOut[] {
    const out: SseOut[] = []
    for (const event of batch) {
      if (this.failed) break
      if (event.type === 'meta') {
        if (this.started) continue
        this.id = responseId(event.id, this.plan)
        this.model = event.model ?? this.model
        this.created = event.created ?? this.created
        continue
      }
      this.start(out)
      if ('choice' in event && event.choice !== 0) continue
      if (event.type === 'reasoning') {
        this.reasoning.add(event)
        continue
      }
      if (event.type !== 'usage') this.flushReasoning(out)
      switch (event.type) {
        case 'text':
          this.text('output_text', event.text, out)
          break
        case 'refusal':
          this.text('refusal', event.text, out)
          break
        case 'tool_call':
          this.toolCall(event, out)
          break
        case 'finish':
          this.close(out)
          this.finish = event.finish
          break
        case 'usage':
          this.usage = event.usage
          break
        case 'error':
          this.failed = true
          this.emit(out, { type: 'error', code: event.error.code ?? null, message: event.error.message, param: event.error.param ?? null })
          break
      }
    }
    return out
  }

  end(): SseOut[] {
    const out: SseOut[] = []
    // After an error event nothing follows, so the client cannot take the cut answer for a whole one.
    if (this.failed) return out
    this.start(out)
    this.flushReasoning(out)
    this.close(out)
    const status = incompleteReason(this.finish) === undefined ? 'completed' : 'incomplete'
    this.emit(out, { type: status === 'completed' ? 'response.completed' : 'response.incomplete', response: this.response(status) })
    return out
  }
}
