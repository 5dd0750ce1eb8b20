// Messages requests ⇄ hub requests.

import type { CallPlan } from '../../../translate/format.js'
import type { HubEffort, HubFunction, HubMessage, HubOptional, HubReasoning, HubRequest, HubToolChoice } from '../../../translate/hub.js'
import { dropOrRefuse, lacking } from '../../../translate/hub.js'
import { field, hintField, optionalField, payload } from '../../../translate/payload.js'
import { absent, at, boolean, inexpressible, type JsonObject, object, onlyKnown, put, refuse, string } from '../../../translate/readers.js'
import { cacheControl, cacheOf, contentParts, messageOf, type ReadState, textBlock } from './content.js'
import {
  type MessagesRequest,
  type MessagesTool,
  type MessagesToolChoice,
  messagesOutputConfig,
  messagesRequest,
  messagesThinking,
  messagesToolChoice,
} from './wire.js'

/** The `max_tokens` a translated request gets when neither the client nor the model's `maxOutputTokens` set one. */
export const DEFAULT_MAX_TOKENS = 4096

/** Anthropic's smallest thinking budget. */
const MIN_BUDGET = 1024

/** The efforts `output_config.effort` takes; the hub's `minimal` is Anthropic's `low`. */
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max'])

/** A message; `system` ones are instructions given mid-conversation. */
const MESSAGE = payload({ role: field(string), content: field((value) => value) })

function conversation(list: unknown[], state: ReadState): HubMessage[] {
  return list.map((item, i) => {
    const path = `messages[${i}]`
    const message = MESSAGE.object(item, path)
    const role = MESSAGE.read(message, 'role', path)
    if (role !== 'user' && role !== 'assistant' && role !== 'system') inexpressible(at(path, 'role'), `is '${role}'`)
    const parts = contentParts(message.content, at(path, 'content'), role, state)
    if (role === 'system' && parts.some((part) => part.type !== 'text')) refuse(at(path, 'content'), `'${path}.content' must be text.`)
    return { role, parts }
  })
}

function system(value: string | unknown[] | undefined, state: ReadState): string[] {
  if (value === undefined) return []
  if (typeof value === 'string') return value === '' ? [] : [value]
  return value.map((item, i) => {
    const block = object(item, `system[${i}]`)
    if (block.type !== 'text') inexpressible(`system[${i}].type`, `is '${String(block.type)}'`)
    const cache = cacheOf(block, `system[${i}]`)
    if (cache !== undefined) state.cache.system.set(i, cache)
    return textBlock(block, `system[${i}]`, state)
  })
}

/** A client tool: `custom` is its one kind another format has. */
const TOOL = payload({
  type: optionalField(string),
  name: field(string),
  description: optionalField(string),
  input_schema: field(object),
  strict: optionalField(boolean),
  cache_control: hintField(),
  /** How finely the tool's input streams: the input is the same. */
  eager_input_streaming: hintField(),
  /**
   * Load the tool only when Anthropic's tool search finds it: no other format has tool search, so it is sent as an
   * ordinary tool, which the model can call all the same.
   */
  defer_loading: hintField(),
})

/**
 * Anthropic's server tools that search or fetch the web, offered to the model rather than asked of it: another
 * format's provider cannot run them, and without them the model answers from what it knows. Dropped and named.
 */
const OFFERED_TOOL = /^web_(search|fetch)_\d+$/

/** A schema that declares no input: what a function without parameters is sent as. */
const NO_INPUT = { type: 'object', properties: {} }
const declaresNothing = (schema: JsonObject) =>
  Object.keys(schema).length === 2 && schema.type === 'object' && JSON.stringify(schema.properties) === '{}'

function tools(list: unknown[] | undefined, state: ReadState): { tools: HubFunction[]; strict: boolean } {
  if (list === undefined) return { tools: [], strict: false }
  const read: (HubFunction & { strict: boolean })[] = []
  list.forEach((item, i) => {
    const path = `tools[${i}]`
    const tool = object(item, path)
    if (typeof tool.type === 'string' && OFFERED_TOOL.test(tool.type)) {
      state.dropped.push(path)
      return
    }
    if (!absent(tool.type) && tool.type !== 'custom')
      inexpressible(at(path, 'type'), `is '${String(tool.type)}', a tool the upstream's format does not have`)
    onlyKnown(tool, TOOL.known, path)
    state.dropped.push(...TOOL.hinted(tool, path))
    const schema = TOOL.read(tool, 'input_schema', path)
    const cache = cacheOf(tool, path)
    if (cache !== undefined) state.cache.tools.set(read.length, cache)
    read.push({
      name: TOOL.read(tool, 'name', path),
      description: TOOL.read(tool, 'description', path),
      parameters: declaresNothing(schema) ? undefined : schema,
      strict: TOOL.read(tool, 'strict', path) === true,
    })
  })
  const strict = read.filter((tool) => tool.strict).length
  if (strict > 0 && strict < read.length) {
    inexpressible(
      `tools[${read.findIndex((tool) => !tool.strict)}].strict`,
      'differs between tools (strict schemas are all or none upstream)',
    )
  }
  return {
    tools: read.map(({ name, description, parameters }) => ({ name, description, parameters })),
    strict: read.length > 0 && strict === read.length,
  }
}

function toolChoice(choice: JsonObject | undefined): HubToolChoice | undefined {
  if (choice === undefined) return undefined
  const type = messagesToolChoice.read(choice, 'type', 'tool_choice')
  if (type === 'auto') return { mode: 'auto', only: undefined }
  if (type === 'any') return { mode: 'required', only: undefined }
  if (type === 'none') return { mode: 'none', only: undefined }
  if (type === 'tool') {
    const name = messagesToolChoice.read(choice, 'name', 'tool_choice') ?? refuse('tool_choice.name', "'tool_choice.name' is required.")
    return { mode: 'required', only: [name] }
  }
  return inexpressible('tool_choice.type', `is '${type}'`)
}

/**
 * The reasoning asked for: `enabled` gives a budget, `disabled` none, `adaptive` (or no thinking) leaves it to the
 * model, at the effort given if one is. A budget says how much to think, which every format takes: an effort beside
 * it only tunes that, and is dropped.
 */
function reasoning(body: JsonObject, state: ReadState): HubReasoning | undefined {
  const thinking = messagesRequest.read(body, 'thinking')
  const config = messagesRequest.read(body, 'output_config')
  const effort = config && messagesOutputConfig.read(config, 'effort', 'output_config')
  if (effort !== undefined && !EFFORTS.has(effort)) inexpressible('output_config.effort', `is '${effort}'`)
  if (thinking) state.dropped.push(...messagesThinking.hinted(thinking, 'thinking'))
  const type = thinking && messagesThinking.read(thinking, 'type', 'thinking')
  if (type === 'enabled' || type === 'disabled') {
    if (effort !== undefined) state.dropped.push('output_config.effort')
    if (type === 'disabled') return { effort: 'none' }
    const budget = messagesThinking.read(thinking as JsonObject, 'budget_tokens', 'thinking')
    return { budget: budget ?? refuse('thinking.budget_tokens', "'thinking.budget_tokens' is required when thinking is enabled.") }
  }
  if (type !== undefined && type !== 'adaptive') inexpressible('thinking.type', `is '${type}'`)
  if (effort !== undefined) return { effort: effort as HubEffort }
  return type === 'adaptive' ? { budget: -1 } : undefined
}

/** `output_config.format`: the JSON schema the answer follows, which Anthropic holds it to. */
const FORMAT = payload({ type: field(string), schema: field(object) })

function output(body: JsonObject): HubRequest['output'] {
  const config = messagesRequest.read(body, 'output_config')
  const format = config && messagesOutputConfig.read(config, 'format', 'output_config')
  if (format === undefined) return undefined
  onlyKnown(format, FORMAT.known, 'output_config.format')
  const type = FORMAT.read(format, 'type', 'output_config.format')
  if (type !== 'json_schema') inexpressible('output_config.format.type', `is '${type}'`)
  return {
    type: 'json_schema',
    name: undefined,
    description: undefined,
    schema: FORMAT.read(format, 'schema', 'output_config.format'),
    strict: true,
  }
}

/** Reads a Messages request into the hub; refuses what the hub cannot hold, by field, and names the hints it drops. */
export function messagesRequestToHub(body: JsonObject): HubRequest {
  onlyKnown(body, messagesRequest.known, '')
  const state: ReadState = {
    dropped: messagesRequest.hinted(body),
    callNames: new Map(),
    signature: undefined,
    cache: { system: new Map(), tools: new Map() },
  }
  const choice = messagesRequest.read(body, 'tool_choice')
  const disabled = choice && messagesToolChoice.read(choice, 'disable_parallel_tool_use', 'tool_choice')
  const fields: HubRequest['fields'] = {}
  if (choice !== undefined) fields.toolChoice = 'tool_choice'
  if (disabled === true) fields.parallelToolCalls = 'tool_choice.disable_parallel_tool_use'
  if (!absent(body.top_k)) fields.topK = 'top_k'
  if (!absent(body.temperature)) fields.temperature = 'temperature'
  if (!absent(body.top_p)) fields.topP = 'top_p'
  fields.reasoning = 'thinking.budget_tokens'
  if (!absent(body.stop_sequences)) fields.stop = 'stop_sequences'
  if (!absent(body.output_config) && !absent((body.output_config as JsonObject).format)) fields.output = 'output_config.format'
  const systemTexts = system(messagesRequest.read(body, 'system'), state)
  const messages = conversation(messagesRequest.read(body, 'messages'), state)
  const declared = tools(messagesRequest.read(body, 'tools'), state)
  return {
    system: systemTexts,
    messages,
    tools: declared.tools,
    strictTools: declared.strict,
    toolChoice: toolChoice(choice),
    output: output(body),
    temperature: messagesRequest.read(body, 'temperature'),
    topP: messagesRequest.read(body, 'top_p'),
    maxOutputTokens: messagesRequest.read(body, 'max_tokens'),
    stop: messagesRequest.read(body, 'stop_sequences'),
    candidates: undefined,
    seed: undefined,
    presencePenalty: undefined,
    frequencyPenalty: undefined,
    reasoning: reasoning(body, state),
    topK: messagesRequest.read(body, 'top_k'),
    parallelToolCalls: disabled === true ? false : undefined,
    showReasoning: undefined,
    // A Messages stream always carries the usage.
    includeUsage: true,
    fields,
    dropped: state.dropped,
    clamped: [],
    cache: state.cache.system.size + state.cache.tools.size > 0 ? state.cache : undefined,
  }
}

/** The members of a hub request Messages has no field for, and what each asks. */
const LACKING: readonly [HubOptional, keyof HubRequest, string][] = [
  ['seed', 'seed', 'asks for a sampling seed'],
  ['presencePenalty', 'presencePenalty', 'sets a presence penalty'],
  ['frequencyPenalty', 'frequencyPenalty', 'sets a frequency penalty'],
]

function choiceOf(hub: HubRequest): MessagesToolChoice | undefined {
  const choice = hub.toolChoice
  const single = hub.parallelToolCalls === false
  if (choice?.mode === 'none') return { type: 'none' }
  // Naming every declared function narrows nothing: it is Messages' `any`.
  const narrows = choice?.only !== undefined && hub.tools.some((tool) => !choice.only?.includes(tool.name))
  if (narrows && (choice?.only?.length ?? 0) > 1) lacking(hub, 'toolChoice', 'narrows the tools to several without naming one')
  const only = narrows ? choice?.only?.[0] : undefined
  const out: MessagesToolChoice | undefined =
    only !== undefined
      ? { type: 'tool', name: only }
      : choice?.mode === 'required'
        ? { type: 'any' }
        : choice || single
          ? { type: 'auto' }
          : undefined
  if (out && single) out.disable_parallel_tool_use = true
  return out
}

/** The Anthropic effort of a hub effort: the names are shared but for `minimal`. */
const effortOf = (effort: HubEffort): string => (effort === 'minimal' ? 'low' : effort)

/**
 * `thinking` (and `output_config.effort`) for the hub's reasoning within `maxTokens`: a budget must be at least 1024
 * and below `max_tokens`, so one beyond it shrinks to fit, and thinking is off when even the least does not.
 */
function thinkingOf(reasoning: HubReasoning, maxTokens: number): { thinking: JsonObject; effort?: string } {
  if ('effort' in reasoning) {
    if (reasoning.effort === 'none') return { thinking: { type: 'disabled' } }
    return { thinking: { type: 'adaptive' }, effort: effortOf(reasoning.effort) }
  }
  if (reasoning.budget < 0) return { thinking: { type: 'adaptive' } }
  const budget = Math.min(Math.max(reasoning.budget, MIN_BUDGET), maxTokens - 1)
  if (reasoning.budget === 0 || budget < MIN_BUDGET) return { thinking: { type: 'disabled' } }
  return { thinking: { type: 'enabled', budget_tokens: budget } }
}

function toolOf(tool: HubFunction, strict: boolean): MessagesTool {
  const out: MessagesTool = { name: tool.name, input_schema: tool.parameters ?? NO_INPUT }
  put(out, 'description', tool.description)
  if (strict) out.strict = true
  return out
}

/** Anthropic's least `top_p` with thinking on. */
const THINKING_TOP_P = 0.95

/**
 * The sampling knobs, and thought summaries: with thinking on, Anthropic refuses `top_k`, a temperature other than 1
 * and a `top_p` below 0.95, so those are dropped and named (refused when translation is strict). Thinking it shows
 * as it is; without thinking there is nothing to show.
 */
function sampling(hub: HubRequest, body: MessagesRequest, strict: boolean): void {
  const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive'
  const refused = (member: HubOptional, what: string) =>
    dropOrRefuse(hub, strict, member, `${what}, which Anthropic refuses with thinking on`)
  if (thinking && hub.topK !== undefined) refused('topK', 'sets top-k sampling')
  else put(body, 'top_k', hub.topK)
  if (thinking && hub.temperature !== undefined && hub.temperature !== 1) refused('temperature', 'sets a temperature other than 1')
  else put(body, 'temperature', hub.temperature)
  if (thinking && hub.topP !== undefined && hub.topP < THINKING_TOP_P) refused('topP', `sets top_p below ${THINKING_TOP_P}`)
  else put(body, 'top_p', hub.topP)
  if (hub.showReasoning && !thinking) dropOrRefuse(hub, strict, 'showReasoning', 'asks for thought summaries of a model not asked to think')
}

/** Writes a hub request as a Messages request for the upstream. */
export function messagesRequestFromHub(hub: HubRequest, plan: CallPlan): MessagesRequest {
  if (hub.candidates !== undefined && hub.candidates !== 1) lacking(hub, 'candidates', 'asks for more than one answer')
  for (const [member, key, what] of LACKING) if (hub[key] !== undefined) lacking(hub, member, what)
  if (hub.output?.type === 'json') lacking(hub, 'output', 'asks for JSON without a schema')
  const maxTokens = hub.maxOutputTokens ?? plan.maxOutputTokens ?? DEFAULT_MAX_TOKENS
  const body: MessagesRequest = {
    model: plan.upstreamModel,
    max_tokens: maxTokens,
    messages: hub.messages.map((message) => messageOf(message, hub)),
  }
  if (plan.stream) body.stream = true
  const [first] = hub.system
  const cache = hub.cache
  if (first !== undefined)
    body.system =
      hub.system.length === 1 && !cache?.system.size
        ? first
        : hub.system.map((text, i) => {
            const point = cache?.system.get(i)
            return point === undefined ? { type: 'text', text } : { type: 'text', text, cache_control: cacheControl(hub, point) }
          })
  if (hub.tools.length > 0)
    body.tools = hub.tools.map((tool, i) => {
      const out = toolOf(tool, hub.strictTools)
      const point = cache?.tools.get(i)
      if (point !== undefined) out.cache_control = cacheControl(hub, point)
      return out
    })
  const choice = choiceOf(hub)
  if (choice) body.tool_choice = choice
  const config: JsonObject = {}
  if (hub.reasoning) {
    const { thinking, effort } = thinkingOf(hub.reasoning, maxTokens)
    body.thinking = thinking
    put(config, 'effort', effort)
  }
  sampling(hub, body, plan.strict === true)
  put(body, 'stop_sequences', hub.stop)
  if (hub.output?.type === 'json_schema') config.format = { type: 'json_schema', schema: hub.output.schema }
  if (Object.keys(config).length > 0) body.output_config = config
  return body
}
