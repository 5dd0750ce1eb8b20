// Chat-completion chunks ⇄ hub stream events, one upstream event at a time.

import { isObject } from '../../../json/value.js'
import { carriedWith, PendingReasoning, unpack } from '../../../translate/carry.js'
import type { CallPlan, StreamDecoder, StreamEncoder } from '../../../translate/format.js'
import { type HubStreamEvent, type HubUsage, unreadable } from '../../../translate/hub.js'
import { type JsonObject, list, parseJson } from '../../../translate/readers.js'
import {
  chatErrorFromHub,
  chatErrorToHub,
  completionId,
  finishFromHub,
  finishToHub,
  signatureOf,
  usageFromHub,
  usageToHub,
} from './response.js'
import type { ChatChunk, ChatDelta } from './wire.js'

/** The end marker chat clients wait for. */
export const DONE = '[DONE]'

function deltaEvents(choice: number, delta: JsonObject, out: HubStreamEvent[]): void {
  if (typeof delta.content === 'string' && delta.content !== '') out.push({ type: 'text', choice, text: delta.content })
  if (typeof delta.refusal === 'string' && delta.refusal !== '') out.push({ type: 'refusal', choice, text: delta.refusal })
  for (const item of list(delta.tool_calls)) {
    if (!isObject(item) || typeof item.index !== 'number') continue
    const fn = isObject(item.function) ? item.function : {}
    const { reasoning, signature } = unpack(signatureOf(item))
    for (const part of reasoning)
      out.push({ type: 'reasoning', choice, text: part.text, signature: part.signature, redacted: part.redacted })
    out.push({
      type: 'tool_call',
      choice,
      index: item.index,
      id: typeof item.id === 'string' ? item.id : undefined,
      name: typeof fn.name === 'string' ? fn.name : undefined,
      args: typeof fn.arguments === 'string' ? fn.arguments : '',
      signature,
    })
  }
}

/** Reads chat-completion chunks from an upstream stream. */
export class ChatStreamDecoder implements StreamDecoder {
  private started = false

  event(data: string): HubStreamEvent[] {
    if (data === DONE) return []
    const chunk = parseJson(data)
    if (!isObject(chunk)) return [unreadable()]
    if (isObject(chunk.error)) return [{ type: 'error', status: 500, error: chatErrorToHub(chunk) }]
    const out: HubStreamEvent[] = []
    if (!this.started) {
      this.started = true
      out.push({
        type: 'meta',
        id: typeof chunk.id === 'string' ? chunk.id : undefined,
        model: typeof chunk.model === 'string' ? chunk.model : undefined,
        created: typeof chunk.created === 'number' ? chunk.created : undefined,
      })
    }
    for (const item of list(chunk.choices)) {
      if (!isObject(item) || typeof item.index !== 'number') continue
      if (isObject(item.delta)) deltaEvents(item.index, item.delta, out)
      const finish = finishToHub(item.finish_reason)
      if (finish) out.push({ type: 'finish', choice: item.index, finish })
    }
    const usage = usageToHub(chunk.usage)
    if (usage) out.push({ type: 'usage', usage })
    return out
  }
}

/** Writes hub events as chat-completion chunks: the role once per choice, usage at the end when asked, then `[DONE]`. */
export class ChatStreamEncoder implements StreamEncoder {
  private id: string
  private model: string
  private created: number
  private readonly spoke = new Set<number>()
  private usage: HubUsage | undefined
  /** Reasoning of each choice since its last tool call, which carries it (a chat answer has no other place for it). */
  private readonly reasoning = new Map<number, PendingReasoning>()

  constructor(private readonly plan: CallPlan) {
    this.id = completionId(undefined, plan)
    this.model = plan.model
    this.created = plan.created
  }

  private chunk(choice: number, delta: ChatDelta, finish: ChatChunk['choices'][number]['finish_reason'] = null): string {
    // The first delta of a choice says who speaks, as chat clients expect.
    if (!this.spoke.has(choice)) {
      this.spoke.add(choice)
      delta = { role: 'assistant', ...delta }
    }
    const chunk: ChatChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: choice, delta, finish_reason: finish }],
    }
    // A client that asked for usage gets `usage` on every chunk, null until the last: the API reference promises it,
    // and clients tell the usage chunk apart by it. Kept here so every upstream's translated stream keeps the rule.
    if (this.plan.includeUsage) chunk.usage = null
    return JSON.stringify(chunk)
  }

  events(batch: readonly HubStreamEvent[]): string[] {
    const out: string[] = []
    for (const event of batch) {
      switch (event.type) {
        case 'meta':
          this.id = completionId(event.id, this.plan)
          this.model = event.model ?? this.model
          this.created = event.created ?? this.created
          break
        case 'text':
          out.push(this.chunk(event.choice, { content: event.text }))
          break
        case 'refusal':
          out.push(this.chunk(event.choice, { refusal: event.text }))
          break
        case 'reasoning': {
          const pending = this.reasoning.get(event.choice) ?? new PendingReasoning()
          this.reasoning.set(event.choice, pending)
          pending.add(event)
          break
        }
        case 'tool_call': {
          const call: NonNullable<ChatDelta['tool_calls']>[number] = { index: event.index, function: { arguments: event.args } }
          if (event.id !== undefined) Object.assign(call, { id: event.id, type: 'function' })
          if (event.name !== undefined) call.function.name = event.name
          // The reasoning rides on the call's first fragment, the one that names it.
          const reasoning = event.id === undefined ? [] : (this.reasoning.get(event.choice)?.take() ?? [])
          const signature = carriedWith(reasoning, event.signature)
          if (signature !== undefined) call.extra_content = { google: { thought_signature: signature } }
          out.push(this.chunk(event.choice, { tool_calls: [call] }))
          break
        }
        case 'finish':
          out.push(this.chunk(event.choice, {}, finishFromHub(event.finish)))
          break
        case 'usage':
          // Gemini reports running totals in every event: the last one counts.
          this.usage = event.usage
          break
        case 'error':
          out.push(JSON.stringify(chatErrorFromHub(event.status, event.error)))
          break
      }
    }
    return out
  }

  end(): string[] {
    const out: string[] = []
    if (this.plan.includeUsage && this.usage) {
      const chunk: ChatChunk = {
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.model,
        choices: [],
        usage: usageFromHub(this.usage),
      }
      out.push(JSON.stringify(chunk))
    }
    out.push(DONE)
    return out
  }
}
