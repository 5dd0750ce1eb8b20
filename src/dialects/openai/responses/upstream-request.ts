// Hub requests → Responses requests, for an OpenAI upstream configured with `api: 'responses'`.

import type { CallPlan } from '../../../translate/format.js'
import type { HubMessage, HubOutput, HubPart, HubRequest, HubToolChoice } from '../../../translate/hub.js'
import { dropOrRefuse, lacking, mediaClass, toolOutputText } from '../../../translate/hub.js'
import { inexpressible } from '../../../translate/readers.js'
import { effortOf } from '../chat-completions/request.js'
import { reasoningOfToken } from './upstream-response.js'
import type { ResponsesInputItem, ResponsesInputPart, ResponsesToolChoice, ResponsesUpstreamRequest } from './wire.js'

/** What a user or system turn's media becomes: an image by URL or inline, or an inline document. */
function mediaPart(part: HubPart & { type: 'media' }): ResponsesInputPart {
  const { media } = part
  if (media.kind === 'url') return { type: 'input_image', image_url: media.url, detail: 'auto' }
  const url = `data:${media.mimeType};base64,${media.data}`
  const kind = mediaClass(media.mimeType)
  if (kind === 'image') return { type: 'input_image', image_url: url, detail: 'auto' }
  if (kind === 'document')
    return part.filename === undefined
      ? { type: 'input_file', file_data: url }
      : { type: 'input_file', file_data: url, filename: part.filename }
  return inexpressible('messages', `holds ${media.mimeType}, which the Responses API cannot take as input`)
}

function inputPart(part: HubPart): ResponsesInputPart | undefined {
  if (part.type === 'text' || part.type === 'refusal') return { type: 'input_text', text: part.text }
  if (part.type === 'media') return mediaPart(part)
  return undefined
}

/**
 * The reasoning items an assistant turn sends back: only an OpenAI model's, which carry their id and encrypted
 * content (see `reasoningToken`); another provider's reasoning no OpenAI model can read, as providers leave it out.
 */
function reasoningItem(part: HubPart & { type: 'reasoning' }): ResponsesInputItem | undefined {
  const own = part.redacted ? undefined : reasoningOfToken(part.signature)
  if (!own) return undefined
  const summary = part.text === '' ? [] : [{ type: 'summary_text' as const, text: part.text }]
  return { type: 'reasoning', id: own.id, summary, encrypted_content: own.encrypted }
}

/** An assistant turn: its items in order, text in a row one message, each tool call and reasoning item its own. */
function assistantItems(parts: HubPart[], out: ResponsesInputItem[]): void {
  let text: string | undefined
  const flush = () => {
    if (text !== undefined && text !== '') out.push({ type: 'message', role: 'assistant', content: text })
    text = undefined
  }
  for (const part of parts) {
    if (part.type === 'text' || part.type === 'refusal') {
      text = (text ?? '') + part.text
      continue
    }
    flush()
    if (part.type === 'tool_call')
      out.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: JSON.stringify(part.args) })
    else if (part.type === 'reasoning') {
      const item = reasoningItem(part)
      if (item) out.push(item)
    } else inexpressible('messages', `holds ${part.type} in an assistant turn, which the Responses API cannot take`)
  }
  flush()
}

/** A user or system turn: tool results first, as the call items they answer, then the rest as one message. */
function turnItems(message: HubMessage, out: ResponsesInputItem[]): void {
  for (const part of message.parts) {
    if (part.type === 'tool_result') out.push({ type: 'function_call_output', call_id: part.id, output: toolOutputText(part.output) })
  }
  const content = message.parts.flatMap((part) => {
    const item = inputPart(part)
    return item ? [item] : []
  })
  if (content.length > 0) out.push({ type: 'message', role: message.role === 'system' ? 'system' : 'user', content })
}

function input(hub: HubRequest): ResponsesInputItem[] {
  const out: ResponsesInputItem[] = []
  for (const message of hub.messages) {
    if (message.role === 'assistant') assistantItems(message.parts, out)
    else turnItems(message, out)
  }
  return out
}

function toolChoice(choice: HubToolChoice): ResponsesToolChoice {
  const only = choice.only
  if (only === undefined || choice.mode !== 'required') return choice.mode
  const [name] = only
  if (only.length === 1 && name !== undefined) return { type: 'function', name }
  return { type: 'allowed_tools', mode: 'required', tools: only.map((name) => ({ type: 'function', name })) }
}

function textFormat(output: HubOutput): NonNullable<ResponsesUpstreamRequest['text']> {
  if (output.type === 'json') return { format: { type: 'json_object' } }
  // `name` is required of a json_schema format.
  const format: NonNullable<ResponsesUpstreamRequest['text']>['format'] = {
    type: 'json_schema',
    name: output.name ?? 'response',
    schema: output.schema,
  }
  if (output.description !== undefined) format.description = output.description
  if (output.strict) format.strict = true
  return { format }
}

/** A function's arguments schema: `parameters` is a required member, and a function without any takes an empty object. */
const NO_PARAMETERS = { type: 'object', properties: {} }

/** Whether the conversation sends back reasoning of an OpenAI model: it then reasons, and its next reasoning is needed too. */
const sendsReasoning = (items: ResponsesInputItem[]) => items.some((item) => item.type === 'reasoning')

/** Writes a hub request as a Responses request for an OpenAI upstream; nothing is stored upstream (`store: false`). */
export function responsesRequestFromHub(hub: HubRequest, plan: CallPlan): ResponsesUpstreamRequest {
  if (hub.candidates !== undefined && hub.candidates !== 1) lacking(hub, 'candidates', 'asks for several answers')
  if (hub.seed !== undefined) lacking(hub, 'seed', 'asks for a sampling seed')
  if (hub.presencePenalty !== undefined) lacking(hub, 'presencePenalty', 'sets a presence penalty')
  if (hub.frequencyPenalty !== undefined) lacking(hub, 'frequencyPenalty', 'sets a frequency penalty')
  const strict = plan.strict === true
  if (hub.topK !== undefined) dropOrRefuse(hub, strict, 'topK', 'sets top-k sampling')
  if (hub.stop !== undefined && hub.stop.length > 0) lacking(hub, 'stop', 'sets stop sequences')
  const items = input(hub)
  const body: ResponsesUpstreamRequest = { model: plan.upstreamModel, input: items, store: false }
  if (hub.system.length > 0) body.instructions = hub.system.join('\n\n')
  if (plan.stream) body.stream = true
  if (hub.tools.length > 0) {
    body.tools = hub.tools.map((tool) => {
      const fn = { type: 'function' as const, name: tool.name, parameters: tool.parameters ?? NO_PARAMETERS, strict: hub.strictTools }
      return tool.description === undefined ? fn : { ...fn, description: tool.description }
    })
  }
  if (hub.toolChoice) body.tool_choice = toolChoice(hub.toolChoice)
  if (hub.parallelToolCalls === false) body.parallel_tool_calls = false
  if (hub.output) body.text = textFormat(hub.output)
  const effort = hub.reasoning && effortOf(hub.reasoning)
  // Thought summaries are the reasoning a Responses model shows; one that does not reason has none to show.
  const reasons = effort !== undefined && effort !== 'none'
  if (effort !== undefined) body.reasoning = reasons && hub.showReasoning ? { effort, summary: 'auto' } : { effort }
  if (hub.showReasoning && !reasons) dropOrRefuse(hub, strict, 'showReasoning', 'asks for thought summaries of a model not asked to reason')
  // Without storage, the reasoning a model needs back on the next turn comes only as encrypted content; a model that
  // does not reason refuses to be asked for it, so it is asked for only of one that does.
  if ((effort !== undefined && effort !== 'none') || sendsReasoning(items)) body.include = ['reasoning.encrypted_content']
  if (hub.maxOutputTokens !== undefined) body.max_output_tokens = hub.maxOutputTokens
  if (hub.temperature !== undefined) body.temperature = hub.temperature
  if (hub.topP !== undefined) body.top_p = hub.topP
  return body
}
