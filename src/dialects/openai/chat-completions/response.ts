// Chat completions, usage, finish reasons and errors ⇄ the hub.

import { isObject } from '../../../json/value.js'
import { carriedWith, unpack } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubChoice, HubError, HubFinish, HubPart, HubReasoningPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import { absent, array, at, type JsonObject, object, optional, refuse, string } from '../../../translate/readers.js'
import type { ChatCompletion, ChatErrorBody, ChatFinishReason, ChatResponseMessage, ChatToolCall, ChatUsage } from './wire.js'

const FINISH_TO_HUB: Readonly<Record<string, HubFinish['reason']>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
}

/** A chat finish reason in hub terms; null means the choice has not finished (a stream's middle). */
export function finishToHub(value: unknown): HubFinish | undefined {
  if (typeof value !== 'string') return undefined
  return { reason: FINISH_TO_HUB[value] ?? 'other', native: value }
}

/** A hub finish as one of the four reasons chat clients know; ends the format has no word for read as `stop`. */
export function finishFromHub(finish: HubFinish): ChatFinishReason {
  return finish.reason === 'other' ? 'stop' : finish.reason
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)

/** Chat usage in hub terms: completion tokens already include reasoning tokens. */
export function usageToHub(value: unknown): HubUsage | undefined {
  if (!isObject(value)) return undefined
  const prompt = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : {}
  const completion = isObject(value.completion_tokens_details) ? value.completion_tokens_details : {}
  const input = count(value.prompt_tokens)
  const output = count(value.completion_tokens)
  return {
    input,
    output,
    total: input + output,
    cachedInput: typeof prompt.cached_tokens === 'number' ? prompt.cached_tokens : undefined,
    cacheWrite: undefined,
    reasoning: typeof completion.reasoning_tokens === 'number' ? completion.reasoning_tokens : undefined,
    toolPrompt: undefined,
  }
}

/** Hub usage as chat usage. */
export function usageFromHub(usage: HubUsage): ChatUsage {
  const out: ChatUsage = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.total }
  if (usage.cachedInput !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cachedInput }
  if (usage.reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning }
  return out
}

/** Parses a tool call's arguments text; the hub (and Gemini) hold arguments as an object. */
export function parseArguments(text: string, path: string): Record<string, unknown> {
  let args: unknown
  try {
    args = text.trim() === '' ? {} : JSON.parse(text)
  } catch {
    return refuse(path, `'${path}' is not JSON.`)
  }
  return isObject(args) ? args : refuse(path, `'${path}' is not a JSON object.`)
}

/** Gemini's thought signature, kept where Google's own OpenAI-compatible API keeps it. */
export function signatureOf(call: JsonObject): string | undefined {
  const extra = call.extra_content
  const google = isObject(extra) && isObject(extra.google) ? extra.google : undefined
  return typeof google?.thought_signature === 'string' ? google.thought_signature : undefined
}

function messageParts(message: JsonObject, path: string): HubPart[] {
  const parts: HubPart[] = []
  const content = optional(message, 'content', path, string)
  if (content !== undefined && content !== '') parts.push({ type: 'text', text: content })
  const refusal = optional(message, 'refusal', path, string)
  if (refusal !== undefined) parts.push({ type: 'refusal', text: refusal })
  for (const [i, item] of (optional(message, 'tool_calls', path, array) ?? []).entries()) {
    const where = at(at(path, 'tool_calls'), i)
    const call = object(item, where)
    const fn = object(call.function, at(where, 'function'))
    const { reasoning, signature } = unpack(signatureOf(call))
    // The first call carries the reasoning that came before the whole answer, its text included.
    if (i === 0) parts.unshift(...reasoning)
    else parts.push(...reasoning)
    parts.push({
      type: 'tool_call',
      id: string(call.id, at(where, 'id')),
      name: string(fn.name, at(where, 'function.name')),
      args: parseArguments(string(fn.arguments, at(where, 'function.arguments')), at(where, 'function.arguments')),
      signature,
    })
  }
  return parts
}

/** Reads an upstream chat completion into the hub. */
export function chatResponseToHub(body: unknown): HubResponse {
  const completion = object(body, '')
  const choices = array(completion.choices, 'choices').map((item, i): HubChoice => {
    const choice = object(item, `choices[${i}]`)
    return {
      index: typeof choice.index === 'number' ? choice.index : i,
      parts: messageParts(object(choice.message, `choices[${i}].message`), `choices[${i}].message`),
      finish: finishToHub(choice.finish_reason),
    }
  })
  return {
    id: optional(completion, 'id', '', string),
    model: optional(completion, 'model', '', string),
    created: typeof completion.created === 'number' ? completion.created : undefined,
    choices,
    usage: usageToHub(completion.usage),
    blocked: undefined,
  }
}

/** The `chatcmpl-` id of an answer: the upstream's id when there is one, else one made from the request id. */
export function completionId(id: string | undefined, plan: CallPlan): string {
  const base = id ?? plan.requestId
  return base.startsWith('chatcmpl-') ? base : `chatcmpl-${base}`
}

/**
 * A hub tool call as a chat tool call. A thought signature rides along for the client to send back, with the
 * reasoning before the call packed in with it: a chat answer has no other field a client returns.
 */
export function toolCallFromHub(part: HubPart & { type: 'tool_call' }, reasoning: readonly HubReasoningPart[] = []): ChatToolCall {
  const call: ChatToolCall = { id: part.id, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.args) } }
  const signature = carriedWith(reasoning, part.signature)
  if (signature !== undefined) call.extra_content = { google: { thought_signature: signature } }
  return call
}

/** The tool calls of an answer's parts, each with the reasoning since the call before it. */
function toolCalls(parts: HubPart[]): ChatToolCall[] {
  const calls: ChatToolCall[] = []
  let reasoning: HubReasoningPart[] = []
  for (const part of parts) {
    if (part.type === 'reasoning') reasoning.push(part)
    if (part.type !== 'tool_call') continue
    calls.push(toolCallFromHub(part, reasoning))
    reasoning = []
  }
  return calls
}

function message(parts: HubPart[]): ChatResponseMessage {
  const texts = parts.flatMap((part) => (part.type === 'text' ? [part.text] : []))
  const refusals = parts.flatMap((part) => (part.type === 'refusal' ? [part.text] : []))
  const calls = toolCalls(parts)
  const out: ChatResponseMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: refusals.length > 0 ? refusals.join('') : null,
  }
  if (calls.length > 0) out.tool_calls = calls
  return out
}

/** Writes a hub answer as a chat completion for the client. */
export function chatResponseFromHub(hub: HubResponse, plan: CallPlan): ChatCompletion {
  const choices: ChatCompletion['choices'] = hub.choices.map((choice) => ({
    index: choice.index,
    message: message(choice.parts),
    finish_reason: choice.finish ? finishFromHub(choice.finish) : null,
    logprobs: null,
  }))
  // A refused prompt has no candidates; chat clients expect a choice, so it becomes an empty filtered one.
  if (hub.blocked !== undefined && choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      finish_reason: 'content_filter',
      logprobs: null,
    })
  }
  const out: ChatCompletion = {
    id: completionId(hub.id, plan),
    object: 'chat.completion',
    created: hub.created ?? plan.created,
    model: hub.model ?? plan.model,
    choices,
  }
  if (hub.usage) out.usage = usageFromHub(hub.usage)
  return out
}

/** Reads an OpenAI error body (or the text of a body that was not JSON). */
export function chatErrorToHub(body: unknown): HubError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined
  if (!error)
    return { message: typeof body === 'string' && body !== '' ? body : 'The upstream model failed.', code: undefined, param: undefined }
  const code = typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : undefined
  return {
    message: typeof error.message === 'string' ? error.message : 'The upstream model failed.',
    code,
    param: absent(error.param) || typeof error.param !== 'string' ? undefined : error.param,
  }
}

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
}

/** Writes a hub error as an OpenAI error body; the status is the upstream's, kept by the caller. */
export function chatErrorFromHub(status: number, error: HubError): ChatErrorBody {
  const type = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  return { error: { message: error.message, type, param: error.param ?? null, code: error.code ?? null } }
}
