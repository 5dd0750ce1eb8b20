// Streamed generate-content responses ⇄ hub stream events, one upstream event at a time.

import { isObject } from '../../../json/value.js'
import { carriedWith, PendingReasoning } from '../../../translate/carry.js'
import type { CallPlan, StreamDecoder, StreamEncoder } from '../../../translate/format.js'
import { type HubFinish, type HubReasoningPart, type HubStreamEvent, unreadable } from '../../../translate/hub.js'
import { list, parseJson } from '../../../translate/readers.js'
import {
  answerCallId,
  answerPart,
  candidateParts,
  finishFromHub,
  finishToHub,
  geminiErrorFromHub,
  geminiErrorToHub,
  reasoningOnly,
  responseId,
  showsThoughts,
  usageFromHub,
  usageToHub,
} from './response.js'
import type { GeminiCandidate, GeminiPart, GeminiResponse } from './wire.js'

/** The HTTP status a streamed Google error names in its `code`, else 500. */
function errorStatus(body: unknown): number {
  const first: unknown = Array.isArray(body) ? body[0] : body
  const code = isObject(first) && isObject(first.error) ? first.error.code : undefined
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500
}

/** Reads generate-content events from an upstream stream. Gemini sends each function call whole, in one event. */
export class GeminiStreamDecoder implements StreamDecoder {
  private started = false
  private responseId: string | undefined
  /** Calls seen so far per candidate: the index of the next one, and whether STOP means "tool calls". */
  private readonly calls = new Map<number, number>()

  constructor(private readonly plan: CallPlan) {}

  event(data: string): HubStreamEvent[] {
    const response = parseJson(data)
    if (Array.isArray(response) || (isObject(response) && isObject(response.error))) {
      return [{ type: 'error', status: errorStatus(response), error: geminiErrorToHub(response) }]
    }
    if (!isObject(response)) return [unreadable()]
    const out: HubStreamEvent[] = []
    if (!this.started) {
      this.started = true
      this.responseId = typeof response.responseId === 'string' ? response.responseId : undefined
      out.push({
        type: 'meta',
        id: this.responseId,
        model: typeof response.modelVersion === 'string' ? response.modelVersion : undefined,
        created: undefined,
      })
    }
    const candidates = list(response.candidates)
    for (const [i, item] of candidates.entries()) {
      if (!isObject(item)) continue
      const choice = typeof item.index === 'number' ? item.index : i
      const first = this.calls.get(choice) ?? 0
      let parts: ReturnType<typeof candidateParts>
      try {
        parts = candidateParts(item.content, `candidates[${i}].content`, (n) => answerCallId(this.responseId, this.plan, choice, n), first)
      } catch {
        return [...out, unreadable()]
      }
      let calls = first
      for (const part of parts) {
        if (part.type === 'reasoning')
          out.push({ type: 'reasoning', choice, text: part.text, signature: part.signature, redacted: part.redacted })
        if (part.type === 'text') out.push({ type: 'text', choice, text: part.text })
        if (part.type === 'tool_call') {
          out.push({
            type: 'tool_call',
            choice,
            index: calls++,
            id: part.id,
            name: part.name,
            args: JSON.stringify(part.args),
            signature: part.signature,
          })
        }
      }
      this.calls.set(choice, calls)
      const finish = finishToHub(item.finishReason, calls > 0)
      if (finish) out.push({ type: 'finish', choice, finish })
    }
    const feedback = isObject(response.promptFeedback) ? response.promptFeedback : undefined
    if (typeof feedback?.blockReason === 'string' && candidates.length === 0) {
      out.push({ type: 'finish', choice: 0, finish: { reason: 'content_filter', native: feedback.blockReason } })
    }
    const usage = usageToHub(response.usageMetadata)
    if (usage) out.push({ type: 'usage', usage })
    return out
  }
}

interface OpenCall {
  id: string | undefined
  name: string | undefined
  args: string
  signature: string | undefined
}

/**
 * Writes hub events as generate-content events, one per upstream event that says something. A function call is
 * sent whole, as Gemini does, once its arguments are complete: when the next call starts, the choice finishes or
 * the stream ends. The event that finishes waits for the next upstream event so the usage (which chat upstreams
 * send after the finish) rides on it, as in Gemini's own last event.
 */
export class GeminiStreamEncoder implements StreamEncoder {
  private id: string
  private model: string
  private readonly open = new Map<number, Map<number, OpenCall>>()
  private held: GeminiResponse | undefined
  /** Another format's reasoning, per choice, until the part after it carries it in its thought signature. */
  private readonly reasoning = new Map<number, PendingReasoning>()

  /** The reasoning `choice` holds, handed over. */
  private takeReasoning(choice: number): HubReasoningPart[] {
    return this.reasoning.get(choice)?.take() ?? []
  }

  /** A part of the reasoning nothing came after, so the client still gets it to send back. */
  private flushReasoning(choice: number, parts: GeminiPart[]): void {
    const reasoning = this.takeReasoning(choice)
    if (reasoning.length > 0) parts.push(reasoningOnly(reasoning))
  }

  /** Whether reasoning is also shown as it comes, as thought parts: the client asked for thoughts. */
  private readonly thoughts: boolean

  constructor(plan: CallPlan) {
    this.id = plan.requestId
    this.model = plan.model
    this.thoughts = showsThoughts(plan)
  }

  private closeCalls(choice: number, parts: GeminiPart[]): void {
    const calls = this.open.get(choice)
    if (!calls) return
    for (const [index, call] of calls) {
      calls.delete(index)
      const args = parseJson(call.args === '' ? '{}' : call.args)
      // Arguments cut short (the answer hit its token limit) cannot be called; the finish reason says why.
      if (!isObject(args) || call.name === undefined) continue
      const part = answerPart({
        type: 'tool_call',
        id: call.id ?? `call_${this.id}_${choice}_${index}`,
        name: call.name,
        args,
        signature: call.signature,
      })
      if (part) parts.push(part)
    }
  }

  private toolCall(event: HubStreamEvent & { type: 'tool_call' }, parts: GeminiPart[]): void {
    const calls = this.open.get(event.choice) ?? new Map<number, OpenCall>()
    this.open.set(event.choice, calls)
    const call = calls.get(event.index)
    if (call) {
      call.args += event.args
      return
    }
    this.closeCalls(event.choice, parts)
    const signature = carriedWith(this.takeReasoning(event.choice), event.signature)
    calls.set(event.index, { id: event.id, name: event.name, args: event.args, signature })
  }

  /** Shows reasoning text as it comes: it continues the thought part this event's candidate ends with, else opens one. */
  private thought(choice: number, text: string, parts: GeminiPart[]): void {
    this.closeCalls(choice, parts)
    const last = parts[parts.length - 1]
    if (last && 'text' in last && last.thought === true) last.text += text
    else parts.push({ text, thought: true })
  }

  private response(candidates: Map<number, GeminiCandidate>): GeminiResponse {
    return { candidates: [...candidates.values()], modelVersion: this.model, responseId: this.id }
  }

  events(batch: readonly HubStreamEvent[]): string[] {
    const out: string[] = []
    const held = this.held
    this.held = undefined
    if (held) {
      const usage = batch.find((event) => event.type === 'usage')
      if (usage) held.usageMetadata = usageFromHub(usage.usage)
      out.push(JSON.stringify(held))
      if (batch.every((event) => event.type === 'usage')) return out
    }
    const candidates = new Map<number, GeminiCandidate>()
    const candidate = (choice: number): GeminiCandidate => {
      const found = candidates.get(choice) ?? { index: choice, content: { role: 'model', parts: [] } }
      candidates.set(choice, found)
      return found
    }
    let finished = false
    let usage: HubStreamEvent | undefined
    for (const event of batch) {
      switch (event.type) {
        case 'meta':
          this.id = responseId(event.id, this.id)
          this.model = event.model ?? this.model
          break
        case 'text':
        case 'refusal': {
          const parts = candidate(event.choice).content.parts
          this.closeCalls(event.choice, parts)
          const reasoning = this.takeReasoning(event.choice)
          const last = parts[parts.length - 1]
          if (last && 'text' in last && last.thought !== true && reasoning.length === 0) last.text += event.text
          else parts.push(answerPart({ type: 'text', text: event.text }, reasoning) ?? { text: event.text })
          break
        }
        case 'reasoning': {
          const pending = this.reasoning.get(event.choice) ?? new PendingReasoning()
          this.reasoning.set(event.choice, pending)
          pending.add(event)
          if (this.thoughts && !event.redacted && event.text !== '')
            this.thought(event.choice, event.text, candidate(event.choice).content.parts)
          break
        }
        case 'tool_call':
          this.toolCall(event, candidate(event.choice).content.parts)
          break
        case 'finish':
          this.finish(candidate(event.choice), event.finish)
          finished = true
          break
        case 'usage':
          usage = event
          break
        case 'error':
          out.push(JSON.stringify(geminiErrorFromHub(event.status, event.error)))
          break
      }
    }
    if (candidates.size === 0 && !usage) return out
    const response = this.response(candidates)
    if (usage?.type === 'usage') response.usageMetadata = usageFromHub(usage.usage)
    if (finished && !usage) this.held = response
    else if ([...candidates.values()].some((c) => c.content.parts.length > 0 || c.finishReason) || usage) out.push(JSON.stringify(response))
    return out
  }

  private finish(candidate: GeminiCandidate, finish: HubFinish): void {
    this.closeCalls(candidate.index, candidate.content.parts)
    this.flushReasoning(candidate.index, candidate.content.parts)
    candidate.finishReason = finishFromHub(finish)
  }

  end(): string[] {
    const out: string[] = []
    const candidates = new Map<number, GeminiCandidate>()
    for (const choice of new Set([...this.open.keys(), ...this.reasoning.keys()])) {
      const parts: GeminiPart[] = []
      this.closeCalls(choice, parts)
      this.flushReasoning(choice, parts)
      if (parts.length > 0) candidates.set(choice, { index: choice, content: { role: 'model', parts } })
    }
    if (candidates.size > 0) out.push(JSON.stringify(this.response(candidates)))
    if (this.held) out.push(JSON.stringify(this.held))
    this.held = undefined
    return out
  }
}
