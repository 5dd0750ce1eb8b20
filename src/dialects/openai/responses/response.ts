// Hub answers → Responses objects: the whole answer, and the parts a stream's events share with it.

import { isObject } from '../../../json/value.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubFinish, HubPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import type {
  ResponsesEcho,
  ResponsesFunctionCallItem,
  ResponsesIncompleteReason,
  ResponsesItemStatus,
  ResponsesMessageItem,
  ResponsesOutputItem,
  ResponsesResponse,
  ResponsesUsage,
} from './wire.js'

/** The `resp_` id of an answer: the upstream's id when there is one, else the gateway's request id. */
export function responseId(id: string | undefined, plan: CallPlan): string {
  const base = id ?? plan.requestId
  return base.startsWith('resp_') ? base : `resp_${base}`
}

/** The id of the output item at `index`: the same for the same answer, whole or streamed. */
export function itemId(kind: 'msg' | 'fc', response: string, index: number): string {
  return `${kind}_${response.slice('resp_'.length)}_${index}`
}

/** Hub usage as Responses usage: input includes cached tokens, output includes reasoning tokens. */
export function usageFromHub(usage: HubUsage): ResponsesUsage {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedInput ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: usage.total,
  }
}

/** Why an answer that ended so is incomplete, or undefined when it is complete. */
export function incompleteReason(finish: HubFinish | undefined): ResponsesIncompleteReason | undefined {
  if (finish?.reason === 'length') return 'max_output_tokens'
  if (finish?.reason === 'content_filter') return 'content_filter'
  return undefined
}

const numberOr = (value: unknown) => (typeof value === 'number' ? value : null)

/** The settings a Responses object repeats from its request, with the API's defaults where the request set none. */
export function echo(request: CallPlan['request']): ResponsesEcho {
  const text = isObject(request.text) ? request.text : {}
  const reasoning = isObject(request.reasoning) ? request.reasoning : {}
  return {
    background: false,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: numberOr(request.max_output_tokens),
    metadata: isObject(request.metadata) ? request.metadata : {},
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: typeof reasoning.effort === 'string' ? reasoning.effort : null, summary: null },
    store: false,
    temperature: numberOr(request.temperature),
    text: { format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: numberOr(request.top_p),
    truncation: 'disabled',
  }
}

/** What a Responses object says beyond its settings. */
export interface ResponseFacts {
  id: string
  model: string
  created: number
  status: ResponsesResponse['status']
  incomplete: ResponsesIncompleteReason | undefined
  output: ResponsesOutputItem[]
  usage: ResponsesUsage | undefined
}

/** A Responses object, keys in the order OpenAI sends them. */
export function responseObject(plan: CallPlan, facts: ResponseFacts): ResponsesResponse {
  const settings = echo(plan.request)
  return {
    id: facts.id,
    object: 'response',
    created_at: facts.created,
    status: facts.status,
    background: settings.background,
    error: null,
    incomplete_details: facts.incomplete === undefined ? null : { reason: facts.incomplete },
    instructions: settings.instructions,
    max_output_tokens: settings.max_output_tokens,
    model: facts.model,
    output: facts.output,
    parallel_tool_calls: settings.parallel_tool_calls,
    previous_response_id: settings.previous_response_id,
    reasoning: settings.reasoning,
    store: settings.store,
    temperature: settings.temperature,
    text: settings.text,
    tool_choice: settings.tool_choice,
    tools: settings.tools,
    top_p: settings.top_p,
    truncation: settings.truncation,
    usage: facts.usage ?? null,
    metadata: settings.metadata,
  }
}

/** A message item with no content yet. */
export function messageItem(id: string, status: ResponsesItemStatus): ResponsesMessageItem {
  return { id, type: 'message', status, content: [], role: 'assistant' }
}

/** A hub tool call as a function call item; a thought signature rides along for the client to send back. */
export function functionCallItem(
  part: Pick<HubPart & { type: 'tool_call' }, 'id' | 'name' | 'signature'>,
  args: string,
  id: string,
  status: ResponsesItemStatus,
): ResponsesFunctionCallItem {
  const item: ResponsesFunctionCallItem = { id, type: 'function_call', status, arguments: args, call_id: part.id, name: part.name }
  if (part.signature !== undefined) item.extra_content = { google: { thought_signature: part.signature } }
  return item
}

/** The output items of an answer's parts: text and refusals in a row form one message, each tool call an item of its own. */
function outputItems(parts: HubPart[], response: string): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = []
  let message: ResponsesMessageItem | undefined
  for (const part of parts) {
    if (part.type === 'tool_call') {
      message = undefined
      items.push(functionCallItem(part, JSON.stringify(part.args), itemId('fc', response, items.length), 'completed'))
      continue
    }
    if (part.type !== 'text' && part.type !== 'refusal') continue
    if (!message) {
      message = messageItem(itemId('msg', response, items.length), 'completed')
      items.push(message)
    }
    const last = message.content[message.content.length - 1]
    if (part.type === 'text' && last?.type === 'output_text') last.text += part.text
    else if (part.type === 'text') message.content.push({ type: 'output_text', annotations: [], logprobs: [], text: part.text })
    else if (last?.type === 'refusal') last.refusal += part.text
    else message.content.push({ type: 'refusal', refusal: part.text })
  }
  return items
}

/** Writes a hub answer as a Responses object for the client; a Responses answer has one output, the first choice's. */
export function responsesResponseFromHub(hub: HubResponse, plan: CallPlan): ResponsesResponse {
  const id = responseId(hub.id, plan)
  const choice = hub.choices[0]
  // A refused prompt has no choices: an empty answer, incomplete for its content.
  const incomplete = hub.blocked !== undefined && !choice ? 'content_filter' : incompleteReason(choice?.finish)
  return responseObject(plan, {
    id,
    model: hub.model ?? plan.model,
    created: hub.created ?? plan.created,
    status: incomplete === undefined ? 'completed' : 'incomplete',
    incomplete,
    output: outputItems(choice?.parts ?? [], id),
    usage: hub.usage && usageFromHub(hub.usage),
  })
}
