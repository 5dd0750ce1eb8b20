// A hub request written as a Converse request (`POST /model/{id}/converse`): messages of content blocks, `system`,
// `inferenceConfig`, `toolConfig`; thinking goes in `additionalModelRequestFields` as the model family takes it; the
// hub's cache breakpoints as `cachePoint` blocks after what they follow (in messages, `system` and the tools).
import type { CallPlan } from '../../../translate/format.js'
import {
  cachePlaced,
  dropOrRefuse,
  type HubCachePoint,
  type HubMessage,
  type HubPart,
  type HubRequest,
  lacking,
  toolOutputText,
} from '../../../translate/hub.js'
import { inexpressible, type JsonObject } from '../../../translate/readers.js'

/** Converse's image formats, by MIME type. */
export const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
}

/** One hub part as a Converse content block; the message's path names what cannot be sent. */
function blockOf(part: HubPart, path: string): JsonObject | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return part.text === '' ? undefined : { text: part.text }
    case 'media': {
      const format = IMAGE_FORMATS[(part.media.mimeType ?? '').toLowerCase()]
      if (part.media.kind !== 'inline' || format === undefined)
        inexpressible(path, 'is media Converse does not take (inline PNG, JPEG, GIF or WebP images only)')
      return { image: { format, source: { bytes: part.media.data } } }
    }
    case 'tool_call':
      return { toolUse: { toolUseId: part.id, name: part.name, input: part.args } }
    case 'tool_result':
      return {
        toolResult: {
          toolUseId: part.id,
          content: [part.output.kind === 'json' ? { json: part.output.value } : { text: toolOutputText(part.output) }],
          status: part.error ? 'error' : 'success',
        },
      }
    case 'reasoning':
      // Another model's reasoning is left out, as providers leave an earlier turn's out of what the model reads.
      if (part.signature === '') return undefined
      return part.redacted
        ? { reasoningContent: { redactedContent: part.signature } }
        : { reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }
  }
}

/** A hub breakpoint as a `cachePoint` block, placed: no longer named as dropped. */
function cachePoint(hub: HubRequest, point: HubCachePoint): JsonObject {
  cachePlaced(hub, point)
  return { cachePoint: point.ttl === undefined ? { type: 'default' } : { type: 'default', ttl: point.ttl } }
}

function messageOf(hub: HubRequest, message: HubMessage, index: number): JsonObject {
  const content: JsonObject[] = []
  message.parts.forEach((part, i) => {
    const block = blockOf(part, `messages[${index}].content[${i}]`)
    if (block !== undefined) content.push(block)
    // After the block it follows; none before it in the message: nothing to cache, and it stays named as dropped.
    if (part.cache !== undefined && content.length > 0) content.push(cachePoint(hub, part.cache))
  })
  return { role: message.role === 'assistant' ? 'assistant' : 'user', content: content.length > 0 ? content : [{ text: ' ' }] }
}

/** `toolConfig.toolChoice`: Converse has `auto`, `any` and one named tool, no `none`. */
function toolChoiceOf(hub: HubRequest): JsonObject | undefined {
  const choice = hub.toolChoice
  if (choice === undefined) return undefined
  if (choice.mode === 'none') lacking(hub, 'toolChoice', 'turns tools off, which Converse cannot say while tools are declared')
  const only = choice.only?.length === 1 ? choice.only[0] : undefined
  if (only !== undefined) return { tool: { name: only } }
  return choice.mode === 'required' ? { any: {} } : { auto: {} }
}

/** The Converse request of a hub request. */
export function converseRequestFromHub(hub: HubRequest, plan: CallPlan): JsonObject {
  const strict = plan.strict === true
  if (hub.candidates !== undefined && hub.candidates !== 1) lacking(hub, 'candidates', 'asks for more than one answer')
  if (hub.output !== undefined) lacking(hub, 'output', 'has no Converse field')
  // Sampling knobs Converse has no field for change how the model samples, not what it can do: dropped and named.
  for (const member of ['seed', 'presencePenalty', 'frequencyPenalty'] as const) {
    if (hub[member] !== undefined) dropOrRefuse(hub, strict, member, 'has no Converse field')
  }
  const body: JsonObject = { messages: hub.messages.filter((m) => m.role !== 'system').map((m, i) => messageOf(hub, m, i)) }
  const cache = hub.cache
  if (hub.system.length > 0) {
    body.system = hub.system.flatMap((text, i) => {
      const point = cache?.system.get(i)
      return point === undefined ? [{ text }] : [{ text }, cachePoint(hub, point)]
    })
  }
  const inference: JsonObject = {}
  const maxTokens = hub.maxOutputTokens ?? plan.maxOutputTokens
  if (maxTokens !== undefined) inference.maxTokens = maxTokens
  if (hub.temperature !== undefined) inference.temperature = hub.temperature
  if (hub.topP !== undefined) inference.topP = hub.topP
  if (hub.stop !== undefined) inference.stopSequences = hub.stop
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference
  if (hub.tools.length > 0) {
    const tools = hub.tools.flatMap((tool, i) => {
      const spec = {
        toolSpec: {
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } },
        },
      }
      const point = cache?.tools.get(i)
      return point === undefined ? [spec] : [spec, cachePoint(hub, point)]
    })
    const toolChoice = toolChoiceOf(hub)
    body.toolConfig = toolChoice === undefined ? { tools } : { tools, toolChoice }
  }
  const extra: JsonObject = {}
  if (hub.topK !== undefined) extra.top_k = hub.topK
  if (hub.reasoning !== undefined && 'budget' in hub.reasoning) extra.thinking = { type: 'enabled', budget_tokens: hub.reasoning.budget }
  // An effort without a budget (Claude Code's adaptive thinking, `reasoning_effort`) has no Converse spelling: the
  // model answers at its own default, as it does for a client that asked nothing.
  else if (hub.reasoning !== undefined)
    dropOrRefuse(hub, strict, 'reasoning', 'asks for a reasoning effort, which Converse takes as a token budget only')
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra
  return body
}
