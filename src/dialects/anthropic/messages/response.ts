// Messages answers, usage, stop reasons and errors ⇄ the hub.

import { isObject } from '../../../json/value.js'
import { carried, carry } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubError, HubFinish, HubPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import { array, at, type JsonObject, object, optional, string } from '../../../translate/readers.js'
import { anthropicErrorType } from '../status.js'
import type {
  MessagesContentBlock,
  MessagesDeltaUsage,
  MessagesErrorBody,
  MessagesMessage,
  MessagesStopDetails,
  MessagesStopReason,
  MessagesUsage,
} from './wire.js'

const FINISH_TO_HUB: Readonly<Record<string, HubFinish['reason']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  pause_turn: 'other',
}

/** A stop reason in hub terms (null: not stopped yet); `stop_sequence` names the sequence that stopped it. */
export function finishToHub(reason: unknown, sequence: unknown): HubFinish | undefined {
  if (typeof reason !== 'string') return undefined
  const finish: HubFinish = { reason: FINISH_TO_HUB[reason] ?? 'other', native: reason }
  if (typeof sequence === 'string') finish.sequence = sequence
  return finish
}

const FINISH_FROM_HUB: Readonly<Record<HubFinish['reason'], MessagesStopReason>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  other: 'end_turn',
}

/** Anthropic's own words that the hub's reasons fold in with others, kept where the source said them. */
const KEPT = new Set<string>(['stop_sequence', 'pause_turn', 'model_context_window_exceeded'])

/** How an answer stopped, as a message (and a `message_delta`) says it. */
export interface MessagesStop {
  stop_reason: MessagesStopReason
  /** A refusal's details: the gateway knows neither its category nor an explanation. */
  stop_details: MessagesStopDetails | null
  stop_sequence: string | null
}

/** A hub finish as a stop reason, and the stop sequence when one stopped it. */
export function finishFromHub(finish: HubFinish | undefined): MessagesStop {
  const native = finish?.native
  if (finish?.sequence !== undefined) return { stop_reason: 'stop_sequence', stop_details: null, stop_sequence: finish.sequence }
  const reason = native !== undefined && KEPT.has(native) ? (native as MessagesStopReason) : FINISH_FROM_HUB[finish?.reason ?? 'stop']
  const details: MessagesStopDetails | null = reason === 'refusal' ? { type: 'refusal', category: null, explanation: null } : null
  return { stop_reason: reason, stop_details: details, stop_sequence: null }
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)
const maybe = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined)

/** Anthropic usage in hub terms: input is every prompt token, read from the cache, written to it or neither. */
export function usageToHub(value: unknown): HubUsage | undefined {
  if (!isObject(value)) return undefined
  const cachedInput = maybe(value.cache_read_input_tokens)
  const cacheWrite = maybe(value.cache_creation_input_tokens)
  const input = count(value.input_tokens) + count(cachedInput) + count(cacheWrite)
  const output = count(value.output_tokens)
  const details = isObject(value.output_tokens_details) ? value.output_tokens_details : {}
  return { input, output, total: input + output, cachedInput, cacheWrite, reasoning: maybe(details.thinking_tokens), toolPrompt: undefined }
}

/**
 * Hub usage as the usage of a `message_delta`: the cache's tokens taken out of the input again, what no other
 * format reports (server tool calls) null.
 */
export function deltaUsageFromHub(usage: HubUsage): MessagesDeltaUsage {
  return {
    input_tokens: Math.max(0, usage.input - (usage.cachedInput ?? 0) - (usage.cacheWrite ?? 0)),
    cache_creation_input_tokens: usage.cacheWrite ?? null,
    cache_read_input_tokens: usage.cachedInput ?? null,
    output_tokens: usage.output,
    output_tokens_details: usage.reasoning === undefined ? null : { thinking_tokens: usage.reasoning },
    server_tool_use: null,
  }
}

/** Hub usage as a message's usage: a delta's counts, and null for what only Anthropic's own answers say (tier, region). */
export function usageFromHub(usage: HubUsage): MessagesUsage {
  const { input_tokens, ...rest } = deltaUsageFromHub(usage)
  return { input_tokens: input_tokens ?? 0, cache_creation: null, ...rest, service_tier: null, inference_geo: null, speed: null }
}

/** The hub parts of an answer's content; blocks of the provider's own tools, which no other format has, are left out. */
export function contentToHub(content: unknown, path: string): HubPart[] {
  const parts: HubPart[] = []
  // The signature a packed thinking block carried for the tool call after it (see `carry.ts`).
  let signature: string | undefined
  for (const [i, item] of array(content, path).entries()) {
    const where = at(path, i)
    const block = object(item, where)
    if (block.type === 'text') parts.push({ type: 'text', text: string(block.text, at(where, 'text')) })
    else if (block.type === 'thinking') {
      const text = string(block.thinking, at(where, 'thinking'))
      const token = string(block.signature, at(where, 'signature'))
      const packed = carried(token)
      if (packed) {
        parts.push(...packed.reasoning)
        signature = packed.signature
      } else parts.push({ type: 'reasoning', text, signature: token, redacted: false })
    } else if (block.type === 'redacted_thinking')
      parts.push({ type: 'reasoning', text: '', signature: string(block.data, at(where, 'data')), redacted: true })
    else if (block.type === 'tool_use') {
      const input = block.input
      parts.push({
        type: 'tool_call',
        id: string(block.id, at(where, 'id')),
        name: string(block.name, at(where, 'name')),
        args: isObject(input) ? input : {},
        signature,
      })
      signature = undefined
    }
  }
  return parts
}

/** Reads an upstream message into the hub: one choice, as Messages answers have. */
export function messagesResponseToHub(body: unknown): HubResponse {
  const message = object(body, '')
  return {
    id: optional(message, 'id', '', string),
    model: optional(message, 'model', '', string),
    created: undefined,
    choices: [
      { index: 0, parts: contentToHub(message.content, 'content'), finish: finishToHub(message.stop_reason, message.stop_sequence) },
    ],
    usage: usageToHub(message.usage),
    blocked: undefined,
  }
}

/** The id of an answer: the upstream's (without a chat id's prefix, which another format's client adds again), else the request's. */
export function messageId(id: string | undefined, plan: CallPlan): string {
  return id === undefined ? `msg_${plan.requestId}` : id.replace(/^chatcmpl-/, '')
}

/**
 * A block carrying another format's tool call signature for the client to send back: a thinking block, the one a
 * Messages client returns as received, with no text of its own (see `carry.ts`).
 */
export function signatureBlock(signature: string): MessagesContentBlock & { type: 'thinking' } {
  return { type: 'thinking', thinking: '', signature: carry({ reasoning: [], signature }) }
}

/** Who made a tool call the gateway writes: the model itself, as every other format's calls are. */
export const DIRECT = { type: 'direct' } as const

/** The content blocks of a hub answer's parts; a refusal is text, as Messages has no refusal channel. */
export function contentFromHub(parts: readonly HubPart[]): MessagesContentBlock[] {
  const blocks: MessagesContentBlock[] = []
  for (const part of parts) {
    if (part.type === 'text' || part.type === 'refusal') {
      const last = blocks.at(-1)
      if (last?.type === 'text') last.text += part.text
      else blocks.push({ type: 'text', text: part.text })
    } else if (part.type === 'reasoning') {
      blocks.push(
        part.redacted
          ? { type: 'redacted_thinking', data: part.signature }
          : { type: 'thinking', thinking: part.text, signature: part.signature },
      )
    } else if (part.type === 'tool_call') {
      if (part.signature !== undefined) blocks.push(signatureBlock(part.signature))
      blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: part.args, caller: DIRECT })
    }
  }
  return blocks
}

/** The usage of an answer that reported none. */
export const NO_USAGE: HubUsage = {
  input: 0,
  output: 0,
  total: 0,
  cachedInput: undefined,
  cacheWrite: undefined,
  reasoning: undefined,
  toolPrompt: undefined,
}

/** Writes a hub answer as a message for the client: its first choice (a Messages request asks for one). */
export function messagesResponseFromHub(hub: HubResponse, plan: CallPlan): MessagesMessage {
  const choice = hub.choices[0]
  // A refused prompt has no choices: an empty answer, stopped for refusal.
  const stop = finishFromHub(hub.blocked !== undefined && !choice ? { reason: 'content_filter', native: undefined } : choice?.finish)
  return {
    id: messageId(hub.id, plan),
    type: 'message',
    role: 'assistant',
    model: hub.model ?? plan.model,
    content: contentFromHub(choice?.parts ?? []),
    container: null,
    diagnostics: null,
    ...stop,
    usage: usageFromHub(hub.usage ?? NO_USAGE),
  }
}

/** Reads an Anthropic error body (or the text of a body that was not JSON); its type is the hub's code. */
export function messagesErrorToHub(body: unknown): HubError {
  const error: JsonObject | undefined = isObject(body) && isObject(body.error) ? body.error : undefined
  if (!error)
    return { message: typeof body === 'string' && body !== '' ? body : 'The upstream model failed.', code: undefined, param: undefined }
  return {
    message: typeof error.message === 'string' ? error.message : 'The upstream model failed.',
    code: typeof error.type === 'string' ? error.type : undefined,
    param: undefined,
  }
}

/**
 * Writes a hub error as an Anthropic error body; its type follows the status, kept by the caller, and its
 * `request_id` is the gateway's, the one the answer's `request-id` header carries.
 */
export function messagesErrorFromHub(status: number, error: HubError, requestId?: string): MessagesErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message: error.message }, request_id: requestId ?? null }
}
