// Responses objects from an upstream → hub answers: the upstream's side of a call translated to the Responses API.

import { isObject } from '../../../json/value.js'
import type { HubFinish, HubPart, HubReasoningPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import { array, at, type JsonObject, list, object, optional, string } from '../../../translate/readers.js'
import { parseArguments } from '../chat-completions/response.js'

/**
 * A reasoning item's id and `encrypted_content` as one hub signature. OpenAI wants both back (the id is a required
 * member of an input reasoning item), and the `rs_` prefix with its colon tells the Responses writer the reasoning is
 * an OpenAI model's, the only reasoning it sends back upstream.
 */
export const reasoningToken = (id: string, encrypted: string): string => `${id}:${encrypted}`

/** The id and encrypted content a `reasoningToken` holds, or undefined for another provider's signature. */
export function reasoningOfToken(token: string): { id: string; encrypted: string } | undefined {
  const match = /^(rs_[\w-]+):(.+)$/s.exec(token)
  return match ? { id: match[1] as string, encrypted: match[2] as string } : undefined
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)
const detail = (value: unknown) => (typeof value === 'number' ? value : undefined)

/** Responses usage in hub terms: input includes cached tokens, output includes reasoning tokens, as the hub counts. */
export function responsesUsageToHub(value: unknown): HubUsage | undefined {
  if (!isObject(value)) return undefined
  const input = isObject(value.input_tokens_details) ? value.input_tokens_details : {}
  const output = isObject(value.output_tokens_details) ? value.output_tokens_details : {}
  const inputTokens = count(value.input_tokens)
  const outputTokens = count(value.output_tokens)
  return {
    input: inputTokens,
    output: outputTokens,
    total: inputTokens + outputTokens,
    cachedInput: detail(input.cached_tokens),
    cacheWrite: detail(input.cache_write_tokens),
    reasoning: detail(output.reasoning_tokens),
    toolPrompt: undefined,
  }
}

/**
 * Why a Responses answer ended, in hub terms: `incomplete_details.reason` for one cut short, a tool call's end for a
 * completed answer that made one, else its `status` (`failed` and `cancelled` have no word elsewhere).
 */
export function responsesFinish(response: JsonObject, madeCalls: boolean): HubFinish {
  const status = typeof response.status === 'string' ? response.status : 'completed'
  if (status === 'incomplete') {
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined
    if (reason === 'max_output_tokens') return { reason: 'length', native: reason }
    if (reason === 'content_filter') return { reason: 'content_filter', native: reason }
    return { reason: 'other', native: typeof reason === 'string' ? reason : status }
  }
  if (status !== 'completed') return { reason: 'other', native: status }
  return madeCalls ? { reason: 'tool_calls', native: status } : { reason: 'stop', native: status }
}

/** The text of a reasoning item: its summaries, else its full reasoning text where the model gives it (open models). */
export function reasoningText(item: JsonObject): string {
  const texts = (parts: unknown) => list(parts).flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []))
  const summary = texts(item.summary)
  return (summary.length > 0 ? summary : texts(item.content)).join('\n\n')
}

/** A reasoning item as a hub part, or undefined when it carries neither text nor what the model needs back. */
export function reasoningPart(item: JsonObject): HubReasoningPart | undefined {
  const text = reasoningText(item)
  const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined
  const id = typeof item.id === 'string' ? item.id : undefined
  const signature = encrypted !== undefined && id !== undefined ? reasoningToken(id, encrypted) : ''
  if (text === '' && signature === '') return undefined
  return { type: 'reasoning', text, signature, redacted: false }
}

/** The hub parts of one output item; items of hosted tools the gateway never asks for are left out. */
function itemParts(item: JsonObject, path: string): HubPart[] {
  if (item.type === 'function_call') {
    const args = string(item.arguments, at(path, 'arguments'))
    return [
      {
        type: 'tool_call',
        id: string(item.call_id, at(path, 'call_id')),
        name: string(item.name, at(path, 'name')),
        args: parseArguments(args, at(path, 'arguments')),
        signature: undefined,
      },
    ]
  }
  if (item.type === 'reasoning') {
    const part = reasoningPart(item)
    return part ? [part] : []
  }
  if (item.type !== 'message') return []
  return array(item.content, at(path, 'content')).flatMap((value, i): HubPart[] => {
    const part = object(value, at(at(path, 'content'), i))
    if (part.type === 'output_text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }]
    if (part.type === 'refusal' && typeof part.refusal === 'string') return [{ type: 'refusal', text: part.refusal }]
    return []
  })
}

/** Reads an upstream Responses object into the hub: one choice, its parts in output order. */
export function responsesResponseToHub(body: unknown): HubResponse {
  const response = object(body, '')
  const parts = array(response.output, 'output').flatMap((item, i) => itemParts(object(item, `output[${i}]`), `output[${i}]`))
  return {
    id: optional(response, 'id', '', string),
    model: optional(response, 'model', '', string),
    created: typeof response.created_at === 'number' ? response.created_at : undefined,
    choices: [
      {
        index: 0,
        parts,
        finish: responsesFinish(
          response,
          parts.some((part) => part.type === 'tool_call'),
        ),
      },
    ],
    usage: responsesUsageToHub(response.usage),
    blocked: undefined,
  }
}
