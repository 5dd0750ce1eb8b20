// A Converse request (what the AWS SDK's ConverseCommand sends to `/model/{id}/converse`) read into the hub: the
// inverse of ../converse/request.ts, with its image table. Cache points become the hub's breakpoints (placed by a
// target that has them, else named as dropped); members that only hint Bedrock (guardrails, request metadata, prompt
// variables, latency tiers) are left out and named; anything else unknown is refused.
import { isObject } from '../../../json/value.js'
import {
  cacheTtl,
  type HubCachePoint,
  type HubMessage,
  type HubPart,
  type HubReasoning,
  type HubRequest,
  type HubToolChoice,
  type HubToolOutput,
} from '../../../translate/hub.js'
import {
  absent,
  array,
  at,
  integer,
  type JsonObject,
  number,
  object,
  onlyKnown,
  optional,
  refuse,
  string,
  strings,
} from '../../../translate/readers.js'
import { IMAGE_FORMATS } from '../converse/request.js'

/** Members that only hint Bedrock: left out toward another format, and named. */
const HINTS = [
  'additionalModelResponseFieldPaths',
  'guardrailConfig',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
  'serviceTier',
]

/** The top-level members a Converse request may have: those read, and the hints. */
export const CONVERSE_FIELDS: ReadonlySet<string> = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'additionalModelRequestFields',
  ...HINTS,
])

/** The MIME type of each Converse image format. */
const IMAGE_TYPES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(IMAGE_FORMATS).map(([type, format]) => [format, type]),
)

/** What reading one request keeps across its messages: the hints left out, each tool call's name by its id, the cache breakpoints. */
interface ReadState {
  dropped: string[]
  names: Map<string, string>
  cache: NonNullable<HubRequest['cache']>
}

/** A `cachePoint` block as the hub's breakpoint: named as dropped until a writer places it. */
function cachePointAt(block: JsonObject, path: string, state: ReadState): HubCachePoint {
  state.dropped.push(path)
  return { path, ttl: cacheTtl((block.cachePoint as JsonObject).ttl) }
}

/**
 * Whether `block` is a `cachePoint`: a breakpoint after the part before it (`last`), or, with none before it in its
 * message, nothing to cache and named as dropped.
 */
function marksCache(block: JsonObject, path: string, state: ReadState, last: HubPart | undefined): boolean {
  if (!isObject(block.cachePoint)) return false
  if (last === undefined) state.dropped.push(path)
  else last.cache = cachePointAt(block, path, state)
  return true
}

/** A tool result's content: one JSON object as JSON, anything else as its texts joined. */
function toolOutput(content: unknown, path: string): HubToolOutput {
  const blocks = absent(content) ? [] : array(content, path)
  const only = blocks.length === 1 && isObject(blocks[0]) ? blocks[0] : undefined
  if (only !== undefined && isObject(only.json)) return { kind: 'json', value: only.json }
  const texts = blocks.map((block, i) => {
    const item = object(block, at(path, i))
    if (typeof item.text === 'string') return item.text
    if (!absent(item.json)) return JSON.stringify(item.json)
    return refuse(at(path, i), `'${at(path, i)}' must be a text or JSON tool result; the upstream's format cannot express others.`)
  })
  return { kind: 'text', text: texts.join('\n') }
}

/** One content block as a hub part; undefined for one that only hints Bedrock (a cache point), named in `dropped`. */
function partOf(block: JsonObject, path: string, state: ReadState): HubPart | undefined {
  if (typeof block.text === 'string') return { type: 'text', text: block.text }
  if (isObject(block.image)) {
    const image = block.image
    const mimeType = IMAGE_TYPES[string(image.format, at(at(path, 'image'), 'format'))]
    const source = object(image.source, at(at(path, 'image'), 'source'))
    if (mimeType === undefined || typeof source.bytes !== 'string')
      refuse(at(path, 'image'), `'${at(path, 'image')}' must be a PNG, JPEG, GIF or WebP image given as bytes.`)
    return { type: 'media', media: { kind: 'inline', mimeType, data: source.bytes }, filename: undefined }
  }
  if (isObject(block.document)) {
    const document = block.document
    const source = object(document.source, at(at(path, 'document'), 'source'))
    if (document.format !== 'pdf' || typeof source.bytes !== 'string')
      refuse(at(path, 'document'), `'${at(path, 'document')}' must be a PDF given as bytes.`)
    const filename = typeof document.name === 'string' ? document.name : undefined
    return { type: 'media', media: { kind: 'inline', mimeType: 'application/pdf', data: source.bytes }, filename }
  }
  if (isObject(block.toolUse)) {
    const use = block.toolUse
    const id = string(use.toolUseId, at(at(path, 'toolUse'), 'toolUseId'))
    const name = string(use.name, at(at(path, 'toolUse'), 'name'))
    state.names.set(id, name)
    return { type: 'tool_call', id, name, args: object(use.input ?? {}, at(at(path, 'toolUse'), 'input')), signature: undefined }
  }
  if (isObject(block.toolResult)) {
    const result = block.toolResult
    const id = string(result.toolUseId, at(at(path, 'toolResult'), 'toolUseId'))
    const output = toolOutput(result.content, at(at(path, 'toolResult'), 'content'))
    return { type: 'tool_result', id, name: state.names.get(id) ?? '', output, error: result.status === 'error' }
  }
  if (isObject(block.reasoningContent)) {
    const { reasoningText, redactedContent } = block.reasoningContent
    if (typeof redactedContent === 'string') return { type: 'reasoning', text: '', signature: redactedContent, redacted: true }
    const text = object(reasoningText, at(at(path, 'reasoningContent'), 'reasoningText'))
    const signature = typeof text.signature === 'string' ? text.signature : ''
    return { type: 'reasoning', text: typeof text.text === 'string' ? text.text : '', signature, redacted: false }
  }
  if (!absent(block.guardContent)) {
    state.dropped.push(path)
    return undefined
  }
  return refuse(path, `'${path}' is a content block this gateway cannot translate for the upstream's format.`)
}

function messagesOf(value: unknown, state: ReadState): HubMessage[] {
  return array(value, 'messages').map((raw, i) => {
    const path = at('messages', i)
    const message = object(raw, path)
    const role = string(message.role, at(path, 'role'))
    if (role !== 'user' && role !== 'assistant') refuse(at(path, 'role'), `'${at(path, 'role')}' must be 'user' or 'assistant'.`)
    const content = array(message.content, at(path, 'content'))
    const parts: HubPart[] = []
    content.forEach((raw, j) => {
      const where = at(at(path, 'content'), j)
      const block = object(raw, where)
      if (!marksCache(block, where, state, parts.at(-1))) {
        const part = partOf(block, where, state)
        if (part !== undefined) parts.push(part)
      }
    })
    return { role, parts }
  })
}

function systemOf(value: unknown, state: ReadState): string[] {
  if (absent(value)) return []
  const texts: string[] = []
  array(value, 'system').forEach((raw, i) => {
    const block = object(raw, at('system', i))
    if (typeof block.text === 'string') texts.push(block.text)
    else if (isObject(block.cachePoint) && texts.length > 0)
      state.cache.system.set(texts.length - 1, cachePointAt(block, at('system', i), state))
    else state.dropped.push(at('system', i))
  })
  return texts
}

function toolChoiceOf(config: JsonObject): HubToolChoice | undefined {
  const choice = config.toolChoice
  if (absent(choice)) return undefined
  const read = object(choice, 'toolConfig.toolChoice')
  if (isObject(read.tool)) return { mode: 'required', only: [string(read.tool.name, 'toolConfig.toolChoice.tool.name')] }
  if (isObject(read.any)) return { mode: 'required', only: undefined }
  return { mode: 'auto', only: undefined }
}

/** `toolConfig`: each `toolSpec` a function (cache points named and left out), and the choice. */
function toolsOf(value: unknown, state: ReadState): Pick<HubRequest, 'tools' | 'toolChoice'> {
  if (absent(value)) return { tools: [], toolChoice: undefined }
  const config = object(value, 'toolConfig')
  const tools: HubRequest['tools'] = []
  array(config.tools, 'toolConfig.tools').forEach((raw, i) => {
    const path = at('toolConfig.tools', i)
    const entry = object(raw, path)
    if (!isObject(entry.toolSpec)) {
      // A cache point after the tools before it (Bedrock caches the tool list up to it).
      if (isObject(entry.cachePoint) && tools.length > 0) state.cache.tools.set(tools.length - 1, cachePointAt(entry, path, state))
      else state.dropped.push(path)
      return
    }
    const spec = entry.toolSpec
    const schema = isObject(spec.inputSchema) && isObject(spec.inputSchema.json) ? spec.inputSchema.json : undefined
    const description = typeof spec.description === 'string' ? spec.description : undefined
    tools.push({ name: string(spec.name, at(at(path, 'toolSpec'), 'name')), description, parameters: schema })
  })
  return { tools, toolChoice: toolChoiceOf(config) }
}

/** `additionalModelRequestFields`: Anthropic's `thinking` and `top_k` are read; the rest are the model's own, named and left out. */
function extraOf(value: unknown, state: ReadState): { topK: number | undefined; reasoning: HubReasoning | undefined } {
  if (absent(value)) return { topK: undefined, reasoning: undefined }
  const extra = object(value, 'additionalModelRequestFields')
  let reasoning: HubReasoning | undefined
  const thinking = extra.thinking
  if (isObject(thinking)) {
    if (thinking.type === 'disabled') reasoning = { budget: 0 }
    else if (thinking.type === 'adaptive') reasoning = { budget: -1 }
    else reasoning = { budget: integer(thinking.budget_tokens, 'additionalModelRequestFields.thinking.budget_tokens') }
  }
  for (const key of Object.keys(extra))
    if (key !== 'thinking' && key !== 'top_k') state.dropped.push(at('additionalModelRequestFields', key))
  return { topK: optional(extra, 'top_k', 'additionalModelRequestFields', integer), reasoning }
}

/** A Converse request in the hub. */
export function converseRequestToHub(body: JsonObject): HubRequest {
  onlyKnown(body, CONVERSE_FIELDS, '')
  const state: ReadState = {
    dropped: HINTS.filter((key) => !absent(body[key])),
    names: new Map(),
    cache: { system: new Map(), tools: new Map() },
  }
  const inference = absent(body.inferenceConfig) ? {} : object(body.inferenceConfig, 'inferenceConfig')
  onlyKnown(inference, new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']), 'inferenceConfig')
  const messages = messagesOf(body.messages, state)
  const system = systemOf(body.system, state)
  const { tools, toolChoice } = toolsOf(body.toolConfig, state)
  const { topK, reasoning } = extraOf(body.additionalModelRequestFields, state)
  const fields: HubRequest['fields'] = {}
  if (toolChoice !== undefined) fields.toolChoice = 'toolConfig.toolChoice'
  if (!absent(inference.temperature)) fields.temperature = 'inferenceConfig.temperature'
  if (!absent(inference.topP)) fields.topP = 'inferenceConfig.topP'
  if (!absent(inference.stopSequences)) fields.stop = 'inferenceConfig.stopSequences'
  if (topK !== undefined) fields.topK = 'additionalModelRequestFields.top_k'
  if (reasoning !== undefined) fields.reasoning = 'additionalModelRequestFields.thinking'
  return {
    system,
    messages,
    tools,
    strictTools: false,
    toolChoice,
    output: undefined,
    temperature: optional(inference, 'temperature', 'inferenceConfig', number),
    topP: optional(inference, 'topP', 'inferenceConfig', number),
    maxOutputTokens: optional(inference, 'maxTokens', 'inferenceConfig', integer),
    stop: optional(inference, 'stopSequences', 'inferenceConfig', strings),
    candidates: undefined,
    seed: undefined,
    presencePenalty: undefined,
    frequencyPenalty: undefined,
    reasoning,
    topK,
    parallelToolCalls: undefined,
    showReasoning: undefined,
    // A ConverseStream always ends with its `metadata` event, which carries the usage.
    includeUsage: true,
    fields,
    dropped: state.dropped,
    clamped: [],
    cache: state.cache.system.size + state.cache.tools.size > 0 ? state.cache : undefined,
  }
}
