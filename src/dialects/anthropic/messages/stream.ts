// Messages stream events ⇄ hub stream events, one upstream event at a time.

import { isObject } from '../../../json/value.js'
import { carried } from '../../../translate/carry.js'
import type { CallPlan, SseOut, StreamDecoder, StreamEncoder } from '../../../translate/format.js'
import { type HubFinish, type HubStreamEvent, type HubUsage, unreadable } from '../../../translate/hub.js'
import { type JsonObject, parseJson } from '../../../translate/readers.js'
import {
  DIRECT,
  deltaUsageFromHub,
  finishFromHub,
  finishToHub,
  messageId,
  messagesErrorFromHub,
  messagesErrorToHub,
  NO_USAGE,
  signatureBlock,
  usageFromHub,
  usageToHub,
} from './response.js'
import type { MessagesContentBlock, MessagesDelta, MessagesMessage, MessagesStreamEvent } from './wire.js'

/** The HTTP status of each Anthropic error type, for an error that arrives in a stream. */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
}

/**
 * What a block of the upstream's stream is, by its index: tool calls are numbered among themselves, and a thinking
 * block's text is held until its signature says whether it is the model's or one the gateway packed.
 */
type OpenBlock = { kind: 'text' } | { kind: 'reasoning'; text: string } | { kind: 'call'; index: number } | { kind: 'other' }

/**
 * Reads Messages events from an upstream stream. `message_start` reports the input usage and `message_delta` the
 * cumulative counts (input ones too, since 2025): a count the delta leaves out is the start's.
 */
export class MessagesStreamDecoder implements StreamDecoder {
  private readonly blocks = new Map<number, OpenBlock>()
  private calls = 0
  private usage: JsonObject = {}
  /** The signature a packed thinking block carried for the tool call after it. */
  private signature: string | undefined

  event(data: string): HubStreamEvent[] {
    const event = parseJson(data)
    if (!isObject(event) || typeof event.type !== 'string') return [unreadable()]
    switch (event.type) {
      case 'message_start': {
        const message = isObject(event.message) ? event.message : {}
        if (isObject(message.usage)) this.usage = { ...message.usage }
        const id = typeof message.id === 'string' ? message.id : undefined
        return [{ type: 'meta', id, model: typeof message.model === 'string' ? message.model : undefined, created: undefined }]
      }
      case 'content_block_start':
        return this.start(event)
      case 'content_block_delta':
        return this.delta(event)
      case 'content_block_stop': {
        // A thinking block cut before its signature: its text, unsigned.
        const block = this.blocks.get(typeof event.index === 'number' ? event.index : -1)
        if (block?.kind !== 'reasoning' || block.text === '') return []
        const text = block.text
        block.text = ''
        return [{ type: 'reasoning', choice: 0, text, signature: undefined, redacted: false }]
      }
      case 'message_delta': {
        const delta = isObject(event.delta) ? event.delta : {}
        if (isObject(event.usage)) for (const [key, value] of Object.entries(event.usage)) if (value !== null) this.usage[key] = value
        const out: HubStreamEvent[] = []
        const finish = finishToHub(delta.stop_reason, delta.stop_sequence)
        if (finish) out.push({ type: 'finish', choice: 0, finish })
        const usage = usageToHub(this.usage)
        if (usage) out.push({ type: 'usage', usage })
        return out
      }
      case 'error': {
        const error = messagesErrorToHub(event)
        return [{ type: 'error', status: ERROR_STATUS[error.code ?? ''] ?? 500, error }]
      }
      default:
        // `content_block_stop`, `message_stop`, `ping`, and events added later: nothing the hub holds.
        return []
    }
  }

  private start(event: JsonObject): HubStreamEvent[] {
    const index = typeof event.index === 'number' ? event.index : -1
    const block = isObject(event.content_block) ? event.content_block : {}
    if (block.type === 'text') {
      this.blocks.set(index, { kind: 'text' })
      return typeof block.text === 'string' && block.text !== '' ? [{ type: 'text', choice: 0, text: block.text }] : []
    }
    if (block.type === 'redacted_thinking') {
      this.blocks.set(index, { kind: 'other' })
      return [{ type: 'reasoning', choice: 0, text: '', signature: typeof block.data === 'string' ? block.data : '', redacted: true }]
    }
    if (block.type === 'thinking') {
      const open: OpenBlock = { kind: 'reasoning', text: typeof block.thinking === 'string' ? block.thinking : '' }
      this.blocks.set(index, open)
      return typeof block.signature === 'string' && block.signature !== '' ? this.signed(open, block.signature) : []
    }
    if (block.type === 'tool_use') {
      const call = this.calls++
      this.blocks.set(index, { kind: 'call', index: call })
      // The input streams in deltas; a block that brings it whole (some compatible servers) gives it here.
      const input = isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : ''
      return [
        {
          type: 'tool_call',
          choice: 0,
          index: call,
          id: typeof block.id === 'string' ? block.id : undefined,
          name: typeof block.name === 'string' ? block.name : undefined,
          args: input,
          signature: this.takeSignature(),
        },
      ]
    }
    // The provider's own tools (web search, code execution): no other format has them.
    this.blocks.set(index, { kind: 'other' })
    return []
  }

  private delta(event: JsonObject): HubStreamEvent[] {
    const block = this.blocks.get(typeof event.index === 'number' ? event.index : -1)
    const delta = isObject(event.delta) ? event.delta : {}
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && block?.kind === 'text')
      return [{ type: 'text', choice: 0, text: delta.text }]
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && block?.kind === 'reasoning') {
      block.text += delta.thinking
      return []
    }
    if (delta.type === 'signature_delta' && typeof delta.signature === 'string' && block?.kind === 'reasoning')
      return this.signed(block, delta.signature)
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && block?.kind === 'call') {
      const { index } = block
      return delta.partial_json === ''
        ? []
        : [{ type: 'tool_call', choice: 0, index, id: undefined, name: undefined, args: delta.partial_json, signature: undefined }]
    }
    return []
  }

  /** A thinking block whole once signed: the model's reasoning, or what the gateway packed in a block of its own. */
  private signed(block: OpenBlock & { kind: 'reasoning' }, signature: string): HubStreamEvent[] {
    const text = block.text
    block.text = ''
    const packed = carried(signature)
    if (!packed) return [{ type: 'reasoning', choice: 0, text, signature, redacted: false }]
    this.signature = packed.signature
    return packed.reasoning.map((part) => ({
      type: 'reasoning',
      choice: 0,
      text: part.text,
      signature: part.signature,
      redacted: part.redacted,
    }))
  }

  private takeSignature(): string | undefined {
    const signature = this.signature
    this.signature = undefined
    return signature
  }
}

/** The block being written: its kind, and for a tool call its number in the hub's terms. */
type Writing = { kind: 'text' } | { kind: 'reasoning' } | { kind: 'call'; hubIndex: number }

/**
 * Writes hub events as a Messages stream: `message_start` at the first event, each part a content block (opened,
 * filled with deltas, stopped, numbered from 0), and at the end `message_delta` with the stop reason and the usage,
 * then `message_stop`. Each event is named by its type. A Messages answer has one choice: others are left out.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private id: string
  private model: string
  private started = false
  private failed = false
  private blocks = 0
  private writing: Writing | undefined
  private finish: HubFinish | undefined
  private usage: HubUsage | undefined

  constructor(private readonly plan: CallPlan) {
    this.id = messageId(undefined, plan)
    this.model = plan.model
  }

  private emit(out: SseOut[], event: MessagesStreamEvent): void {
    out.push({ event: event.type, data: JSON.stringify(event) })
  }

  /** `message_start`, with the usage known so far: an upstream that reports it only at the end says it in `message_delta`. */
  private start(out: SseOut[], batch: readonly HubStreamEvent[]): void {
    if (this.started) return
    this.started = true
    const usage = batch.find((event) => event.type === 'usage')
    const message: MessagesMessage = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      container: null,
      diagnostics: null,
      stop_reason: null,
      stop_details: null,
      stop_sequence: null,
      usage: usageFromHub(usage?.type === 'usage' ? { ...usage.usage, output: 0, reasoning: undefined } : NO_USAGE),
    }
    this.emit(out, { type: 'message_start', message })
  }

  private stop(out: SseOut[]): void {
    if (!this.writing) return
    this.writing = undefined
    this.emit(out, { type: 'content_block_stop', index: this.blocks - 1 })
  }

  /** Opens a block; one that comes whole (`writing` undefined: redacted thinking) is stopped at once. */
  private open(out: SseOut[], block: MessagesContentBlock, writing: Writing | undefined): void {
    this.stop(out)
    this.emit(out, { type: 'content_block_start', index: this.blocks++, content_block: block })
    this.writing = writing
    if (!writing) this.emit(out, { type: 'content_block_stop', index: this.blocks - 1 })
  }

  private delta(out: SseOut[], delta: MessagesDelta): void {
    this.emit(out, { type: 'content_block_delta', index: this.blocks - 1, delta })
  }

  private event(event: HubStreamEvent, out: SseOut[]): void {
    switch (event.type) {
      case 'text':
      case 'refusal':
        if (this.writing?.kind !== 'text') this.open(out, { type: 'text', text: '' }, { kind: 'text' })
        this.delta(out, { type: 'text_delta', text: event.text })
        return
      case 'reasoning':
        if (event.redacted) {
          this.open(out, { type: 'redacted_thinking', data: event.signature ?? '' }, undefined)
          return
        }
        if (this.writing?.kind !== 'reasoning') this.open(out, { type: 'thinking', thinking: '', signature: '' }, { kind: 'reasoning' })
        if (event.text !== '') this.delta(out, { type: 'thinking_delta', thinking: event.text })
        if (event.signature !== undefined) {
          this.delta(out, { type: 'signature_delta', signature: event.signature })
          this.stop(out)
        }
        return
      case 'tool_call': {
        if (this.writing?.kind !== 'call' || this.writing.hubIndex !== event.index) {
          // Another format's signature goes first, in a block of its own the client sends back with the call.
          if (event.signature !== undefined) {
            const { signature } = signatureBlock(event.signature)
            this.open(out, { type: 'thinking', thinking: '', signature: '' }, { kind: 'reasoning' })
            this.delta(out, { type: 'signature_delta', signature })
          }
          const id = event.id ?? `toolu_${this.plan.requestId}_${event.index}`
          const block: MessagesContentBlock = { type: 'tool_use', id, name: event.name ?? '', input: {}, caller: DIRECT }
          this.open(out, block, { kind: 'call', hubIndex: event.index })
        }
        if (event.args !== '') this.delta(out, { type: 'input_json_delta', partial_json: event.args })
        return
      }
      case 'finish':
        this.stop(out)
        this.finish = event.finish
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
      if (event.type === 'meta') {
        if (this.started) continue
        if (event.id !== undefined) this.id = messageId(event.id, this.plan)
        this.model = event.model ?? this.model
        // The message starts as soon as the upstream's does: a chat upstream's first chunk says only its role, and
        // holding `message_start` for the first text would cost the client one upstream frame of time to first byte.
        this.start(out, batch)
        continue
      }
      if (event.type === 'error') {
        // After an error nothing follows, so the client cannot take the cut answer for a whole one.
        this.failed = true
        this.emit(out, messagesErrorFromHub(event.status, event.error, this.plan.requestId))
        break
      }
      this.start(out, batch)
      if ('choice' in event && event.choice !== 0) continue
      this.event(event, out)
    }
    return out
  }

  end(): SseOut[] {
    const out: SseOut[] = []
    if (this.failed) return out
    this.start(out, [])
    this.stop(out)
    const usage = deltaUsageFromHub(this.usage ?? NO_USAGE)
    this.emit(out, { type: 'message_delta', delta: { container: null, ...finishFromHub(this.finish) }, usage })
    this.emit(out, { type: 'message_stop' })
    return out
  }
}
