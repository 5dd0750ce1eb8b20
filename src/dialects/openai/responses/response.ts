// Hub answers → Responses objects: the whole answer, and the parts a stream's events share with it.

import { isObject } from '../../../json/value.js'
import { type Carried, carry } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubFinish, HubPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import type {
  ResponsesEcho,
  ResponsesFunctionCallItem,
  ResponsesIncompleteReason,
  ResponsesItemStatus,
  ResponsesMessageItem,
  ResponsesOutputItem,
  ResponsesReasoningItem,
  ResponsesResponse,
  ResponsesUsage,
} from './wire.js'

/** The `resp_` id of an answer: the upstream's id when there is one, else the gateway's request id. */
export function responseId(id: string | undefined, plan: CallPlan): string {
  const base = id ?? plan.requestId
  return base.startsWith('resp_') ? base : `resp_${base}`
}

/** The id of the output item at `index`: the same for the same answer, whole or streamed. */
export function itemId(kind: 'msg' | 'fc' | 'rs', response: string, index: number): string {
  return `${kind}_${response.slice('resp_'.length)}_${index}`
}

/** Hub usage as Responses usage: input includes cached tokens, output includes reasoning tokens. */
export function usageFromHub(usage: HubUsage): ResponsesUsage {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedInput ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
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

/** The namespaces of the functions a request declared in one: a call of `ns__name` is written as `name` in `ns`. */
export function namespaces(request: CallPlan['request']): ReadonlySet<string> {
  const names = new Set<string>()
  for (const tool of Array.isArray(request.tools) ? request.tools : []) {
    if (isObject(tool) && tool.type === 'namespace' && typeof tool.name === 'string') names.add(tool.name)
  }
  return names
}

/** A hub tool call as a function call item, in its namespace when its name says it has one the request declared. */
export function functionCallItem(
  part: Pick<HubPart & { type: 'tool_call' }, 'id' | 'name'>,
  args: string,
  id: string,
  status: ResponsesItemStatus,
  declared: ReadonlySet<string>,
): ResponsesFunctionCallItem {
  const item: ResponsesFunctionCallItem = { id, type: 'function_call', status, arguments: args, call_id: part.id, name: part.name }
  const split = part.name.indexOf('__')
  if (split > 0 && declared.has(part.name.slice(0, split))) {
    item.namespace = part.name.slice(0, split)
    item.name = part.name.slice(split + 2)
  }
  return item
}

/** A reasoning item carrying reasoning, or a tool call's signature, for the client to send back (see `carry.ts`). */
export function reasoningItem(id: string, carried: Carried): ResponsesReasoningItem {
  return { id, type: 'reasoning', summary: [], encrypted_content: carry(carried) }
}

/** The output items of an answer's parts: text and refusals in a row form one message, each tool call an item of its own. */
function outputItems(parts: HubPart[], response: string, declared: ReadonlySet<string>): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = []
  let message: ResponsesMessageItem | undefined
  for (const part of parts) {
    if (part.type === 'reasoning') {
      message = undefined
      items.push(reasoningItem(itemId('rs', response, items.length), { reasoning: [part], signature: undefined }))
      continue
    }
    if (part.type === 'tool_call') {
      message = undefined
      if (part.signature !== undefined)
        items.push(reasoningItem(itemId('rs', response, items.length), { reasoning: [], signature: part.signature }))
      items.push(functionCallItem(part, JSON.stringify(part.args), itemId('fc', response, items.length), 'completed', declared))
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
    output: outputItems(choice?.parts ?? [], id, namespaces(plan.request)),
    usage: hub.usage && usageFromHub(hub.usage),
  })
}
