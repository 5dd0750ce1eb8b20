// Chat-completions requests ⇄ hub requests.

import { isObject } from '../../../json/value.js'
import { unpack } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type {
  HubFunction,
  HubMessage,
  HubOptional,
  HubOutput,
  HubPart,
  HubReasoning,
  HubReasoningPart,
  HubRequest,
  HubToolChoice,
} from '../../../translate/hub.js'
import { dropOrRefuse, isEffort, toolOutputText } from '../../../translate/hub.js'
import { field, optionalField, payload } from '../../../translate/payload.js'
import {
  absent,
  array,
  at,
  boolean,
  inexpressible,
  isStrings,
  type JsonObject,
  object,
  onlyKnown,
  put,
  refuse,
  string,
  unchecked,
} from '../../../translate/readers.js'
import { content, text, userParts } from './content.js'
import { parseArguments, signatureOf } from './response.js'
import {
  type ChatMessage,
  type ChatRequest,
  type ChatResponseFormat,
  type ChatTool,
  type ChatToolCall,
  type ChatToolChoice,
  chatRequest,
  chatStreamOptions,
} from './wire.js'

/** A tool call of an assistant message; `extra_content` carries a Gemini thought signature back. */
const TOOL_CALL = payload({ id: field(string), type: field(unchecked), function: field(object), extra_content: optionalField(unchecked) })

/** A tool call sent back, and the reasoning its signature carried (see `carry.ts`). */
function toolCall(value: unknown, path: string): { reasoning: HubReasoningPart[]; call: HubPart & { type: 'tool_call' } } {
  const call = TOOL_CALL.object(value, path)
  if (call.type !== 'function') inexpressible(at(path, 'type'), 'is not a function call')
  const fn = TOOL_CALL.read(call, 'function', path)
  const args = parseArguments(string(fn.arguments, at(path, 'function.arguments')), at(path, 'function.arguments'))
  const { reasoning, signature } = unpack(signatureOf(call))
  const id = TOOL_CALL.read(call, 'id', path)
  return { reasoning, call: { type: 'tool_call', id, name: string(fn.name, at(path, 'function.name')), args, signature } }
}

/** A message of text (or, for a user, of media too); `content` is read by its role. */
const TEXT_MESSAGE = payload({ role: field(string), content: field(unchecked) })
const ASSISTANT_MESSAGE = payload({
  role: field(string),
  content: optionalField(unchecked),
  tool_calls: optionalField(array),
  refusal: optionalField(string),
})
const TOOL_MESSAGE = payload({ role: field(string), content: field(unchecked), tool_call_id: field(string) })

/** The members a message may have, by its role. A map, so a role such as `constructor` is one it does not list. */
const MESSAGES = new Map<string, { readonly known: ReadonlySet<string> }>([
  ['system', TEXT_MESSAGE],
  ['developer', TEXT_MESSAGE],
  ['user', TEXT_MESSAGE],
  ['assistant', ASSISTANT_MESSAGE],
  ['tool', TOOL_MESSAGE],
])

function conversation(list: unknown[]): { system: string[]; messages: HubMessage[] } {
  const system: string[] = []
  const messages: HubMessage[] = []
  // A tool message names only the call's id; the function's name comes from the nearest assistant turn that made it.
  const callNames = new Map<string, string>()
  list.forEach((item, i) => {
    const path = `messages[${i}]`
    const message = object(item, path)
    const role = TEXT_MESSAGE.read(message, 'role', path)
    const members = MESSAGES.get(role)
    if (members === undefined) inexpressible(at(path, 'role'), `is '${role}'`)
    onlyKnown(message, members.known, path)
    if (role === 'system' || role === 'developer') {
      const parts = text(message.content, at(path, 'content'), false)
      // One given mid-conversation stays where it stands: a format without such messages says it as the user's.
      if (messages.length > 0) messages.push({ role: 'system', parts })
      else for (const part of parts) if (part.type === 'text') system.push(part.text)
      return
    }
    if (role === 'user') {
      messages.push({ role: 'user', parts: userParts(message.content, at(path, 'content')) })
      return
    }
    if (role === 'assistant') {
      const parts = absent(message.content) ? [] : text(message.content, at(path, 'content'), true)
      const refusal = ASSISTANT_MESSAGE.read(message, 'refusal', path)
      if (refusal !== undefined) parts.push({ type: 'refusal', text: refusal })
      const calls = ASSISTANT_MESSAGE.read(message, 'tool_calls', path) ?? []
      calls.forEach((call, j) => {
        const read = toolCall(call, at(at(path, 'tool_calls'), j))
        callNames.set(read.call.id, read.call.name)
        // The first call carries the reasoning that came before the whole answer, its text included.
        if (j === 0) parts.unshift(...read.reasoning)
        else parts.push(...read.reasoning)
        parts.push(read.call)
      })
      messages.push({ role: 'assistant', parts })
      return
    }
    const id = TOOL_MESSAGE.read(message, 'tool_call_id', path)
    const name = callNames.get(id)
    if (name === undefined) refuse(at(path, 'tool_call_id'), `'${path}.tool_call_id' matches no tool call of an earlier assistant message.`)
    const output = text(message.content, at(path, 'content'), false)
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join('')
    const result: HubPart = { type: 'tool_result', id, name, output: { kind: 'text', text: output }, error: false }
    const last = messages[messages.length - 1]
    // Consecutive tool messages answer one assistant turn together: one user turn, as Gemini wants them.
    if (last?.role === 'user' && last.parts.every((part) => part.type === 'tool_result')) last.parts.push(result)
    else messages.push({ role: 'user', parts: [result] })
  })
  return { system, messages }
}

/** A function tool: `function` is its only kind a chat request and Gemini share. */
const TOOL = payload({ type: field(unchecked), function: field(unchecked) })
const FUNCTION = payload({
  name: field(string),
  description: optionalField(string),
  parameters: optionalField(object),
  strict: optionalField(boolean),
})

function tools(list: unknown[] | undefined): { tools: HubFunction[]; strict: boolean } {
  if (list === undefined) return { tools: [], strict: false }
  const strict = list.map((item) => isObject(item) && isObject(item.function) && item.function.strict === true)
  if (strict.some((s) => s) && !strict.every((s) => s)) {
    inexpressible(`tools[${strict.indexOf(false)}].function.strict`, 'differs between tools (strict schemas are all or none upstream)')
  }
  const functions = list.map((item, i): HubFunction => {
    const path = `tools[${i}]`
    const tool = object(item, path)
    if (tool.type !== 'function') inexpressible(at(path, 'type'), `is '${String(tool.type)}', not 'function'`)
    onlyKnown(tool, TOOL.known, path)
    const where = at(path, 'function')
    const fn = FUNCTION.object(tool.function, where)
    return {
      name: FUNCTION.read(fn, 'name', where),
      description: FUNCTION.read(fn, 'description', where),
      parameters: FUNCTION.read(fn, 'parameters', where),
    }
  })
  return { tools: functions, strict: strict.length > 0 && strict.every((s) => s) }
}

function toolChoice(value: unknown): HubToolChoice | undefined {
  if (value === undefined) return undefined
  if (value === 'auto' || value === 'none' || value === 'required') return { mode: value, only: undefined }
  const choice = object(value, 'tool_choice')
  if (choice.type === 'function') {
    return { mode: 'required', only: [string(object(choice.function, 'tool_choice.function').name, 'tool_choice.function.name')] }
  }
  if (choice.type === 'allowed_tools') {
    const allowed = object(choice.allowed_tools, 'tool_choice.allowed_tools')
    if (allowed.mode !== 'required')
      inexpressible('tool_choice.allowed_tools.mode', "narrows the tools without requiring a call (only 'required' can be translated)")
    const names = array(allowed.tools, 'tool_choice.allowed_tools.tools').map((tool, i) => {
      const path = `tool_choice.allowed_tools.tools[${i}]`
      return string(object(object(tool, path).function, at(path, 'function')).name, at(path, 'function.name'))
    })
    return { mode: 'required', only: names }
  }
  return refuse('tool_choice', "'tool_choice' must be 'auto', 'none', 'required' or a function or allowed_tools object.")
}

/** `response_format.json_schema`. */
const JSON_SCHEMA = payload({
  name: optionalField(string),
  description: optionalField(string),
  schema: optionalField(object),
  strict: optionalField(boolean),
})

function output(format: JsonObject | undefined): HubOutput | undefined {
  if (format === undefined || format.type === 'text') return undefined
  if (format.type === 'json_object') return { type: 'json' }
  if (format.type !== 'json_schema') return inexpressible('response_format.type', `is '${String(format.type)}'`)
  const path = 'response_format.json_schema'
  const spec = JSON_SCHEMA.object(format.json_schema, path)
  return {
    type: 'json_schema',
    name: JSON_SCHEMA.read(spec, 'name', path),
    description: JSON_SCHEMA.read(spec, 'description', path),
    schema: JSON_SCHEMA.read(spec, 'schema', path) ?? { type: 'object' },
    strict: spec.strict === true,
  }
}

function neutral(body: JsonObject, field: keyof ChatRequest & string, allowed: (value: unknown) => boolean, what: string): void {
  if (!absent(body[field]) && !allowed(body[field])) inexpressible(field, what)
}

/** `stop` as a list: a lone sequence is a list of one. */
const stopList = (stop: string | string[] | undefined): string[] | undefined => (typeof stop === 'string' ? [stop] : stop)

/** Reads a chat-completions request into the hub; refuses what the hub cannot hold, by field. */
export function chatRequestToHub(body: JsonObject): HubRequest {
  onlyKnown(body, chatRequest.known, '')
  neutral(body, 'logprobs', (v) => v === false, 'asks for log probabilities')
  neutral(body, 'modalities', (v) => isStrings(v) && v.length === 1 && v[0] === 'text', 'asks for output other than text')
  const max = chatRequest.read(body, 'max_completion_tokens')
  const legacyMax = chatRequest.read(body, 'max_tokens')
  if (max !== undefined && legacyMax !== undefined && max !== legacyMax)
    refuse('max_tokens', "'max_tokens' and 'max_completion_tokens' disagree.")
  const effort = chatRequest.read(body, 'reasoning_effort')
  if (effort !== undefined && !isEffort(effort)) inexpressible('reasoning_effort', `is '${effort}'`)
  const streamOptions = chatRequest.read(body, 'stream_options')
  const { system, messages } = conversation(chatRequest.read(body, 'messages'))
  const declared = tools(chatRequest.read(body, 'tools'))
  const fields: HubRequest['fields'] = {}
  for (const [member, key] of SOURCES) if (!absent(body[key])) fields[member] = key
  const parallel = chatRequest.read(body, 'parallel_tool_calls')
  return {
    system,
    messages,
    tools: declared.tools,
    strictTools: declared.strict,
    toolChoice: toolChoice(chatRequest.read(body, 'tool_choice')),
    output: output(chatRequest.read(body, 'response_format')),
    temperature: chatRequest.read(body, 'temperature'),
    topP: chatRequest.read(body, 'top_p'),
    maxOutputTokens: max ?? legacyMax,
    stop: stopList(chatRequest.read(body, 'stop')),
    candidates: chatRequest.read(body, 'n'),
    seed: chatRequest.read(body, 'seed'),
    presencePenalty: chatRequest.read(body, 'presence_penalty'),
    frequencyPenalty: chatRequest.read(body, 'frequency_penalty'),
    reasoning: effort === undefined ? undefined : { effort },
    topK: undefined,
    parallelToolCalls: parallel === false ? false : undefined,
    showReasoning: undefined,
    includeUsage: streamOptions !== undefined && chatStreamOptions.read(streamOptions, 'include_usage', 'stream_options') === true,
    fields,
    dropped: chatRequest.hinted(body),
    clamped: [],
  }
}

/** The hub members another format may lack, by the chat field that sets each. */
const SOURCES: readonly [HubOptional, keyof ChatRequest & string][] = [
  ['candidates', 'n'],
  ['seed', 'seed'],
  ['presencePenalty', 'presence_penalty'],
  ['frequencyPenalty', 'frequency_penalty'],
  ['output', 'response_format'],
  ['parallelToolCalls', 'parallel_tool_calls'],
  ['toolChoice', 'tool_choice'],
  ['stop', 'stop'],
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
  ['reasoning', 'reasoning_effort'],
]

/** Thinking budgets read back as the nearest effort (the reverse of Google's documented effort → budget table). */
export function effortOf(reasoning: HubReasoning): string | undefined {
  // Anthropic's `max` is above OpenAI's highest effort.
  if ('effort' in reasoning) return reasoning.effort === 'max' ? 'xhigh' : reasoning.effort
  if (reasoning.budget < 0) return undefined
  if (reasoning.budget === 0) return 'none'
  return reasoning.budget <= 1024 ? 'low' : reasoning.budget <= 8192 ? 'medium' : 'high'
}

function messages(hub: HubRequest): ChatMessage[] {
  const out: ChatMessage[] = []
  if (hub.system.length > 0) out.push({ role: 'system', content: content(hub.system.map((text) => ({ type: 'text', text }))) })
  for (const message of hub.messages) {
    if (message.role === 'system') {
      out.push({ role: 'system', content: content(message.parts) })
      continue
    }
    if (message.role === 'assistant') {
      const calls = message.parts.filter((part) => part.type === 'tool_call')
      const texts = message.parts.filter((part) => part.type === 'text' || part.type === 'refusal')
      const assistant: ChatMessage & { role: 'assistant' } = { role: 'assistant', content: texts.length === 0 ? null : content(texts) }
      if (calls.length > 0) {
        assistant.tool_calls = calls.map(
          (call): ChatToolCall => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }),
        )
      }
      out.push(assistant)
      continue
    }
    for (const part of message.parts) {
      if (part.type === 'tool_result') out.push({ role: 'tool', tool_call_id: part.id, content: toolOutputText(part.output) })
    }
    const rest = message.parts.filter((part) => part.type !== 'tool_result')
    if (rest.length > 0) out.push({ role: 'user', content: content(rest) })
  }
  return out
}

function choice(choice: HubToolChoice): ChatToolChoice {
  const only = choice.only
  if (only === undefined || choice.mode !== 'required') return choice.mode
  const [name] = only
  if (only.length === 1 && name !== undefined) return { type: 'function', function: { name } }
  return {
    type: 'allowed_tools',
    allowed_tools: { mode: 'required', tools: only.map((name) => ({ type: 'function', function: { name } })) },
  }
}

function responseFormat(output: HubOutput): ChatResponseFormat {
  if (output.type === 'json') return { type: 'json_object' }
  const spec: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean } = {
    name: output.name ?? 'response',
    schema: output.schema,
  }
  put(spec, 'description', output.description)
  if (output.strict) spec.strict = true
  return { type: 'json_schema', json_schema: spec }
}

/** Writes a hub request as a chat-completions request for the upstream. */
export function chatRequestFromHub(hub: HubRequest, plan: CallPlan): ChatRequest {
  const strict = plan.strict === true
  if (hub.topK !== undefined) dropOrRefuse(hub, strict, 'topK', 'sets top-k sampling')
  // Chat completions never shows a model's reasoning.
  if (hub.showReasoning) dropOrRefuse(hub, strict, 'showReasoning', 'asks for thought summaries')
  const body: ChatRequest = { model: plan.upstreamModel, messages: messages(hub) }
  // The upstream's usage is how the gateway counts tokens, so a translated stream always asks for it.
  if (plan.stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } })
  if (hub.tools.length > 0) {
    body.tools = hub.tools.map((tool): ChatTool => {
      const fn: ChatTool['function'] = { name: tool.name }
      put(fn, 'description', tool.description)
      put(fn, 'parameters', tool.parameters)
      if (hub.strictTools) fn.strict = true
      return { type: 'function', function: fn }
    })
  }
  if (hub.toolChoice) body.tool_choice = choice(hub.toolChoice)
  if (hub.output) body.response_format = responseFormat(hub.output)
  put(body, 'temperature', hub.temperature)
  put(body, 'top_p', hub.topP)
  put(body, 'max_completion_tokens', hub.maxOutputTokens)
  put(body, 'stop', hub.stop)
  put(body, 'n', hub.candidates)
  put(body, 'seed', hub.seed)
  put(body, 'presence_penalty', hub.presencePenalty)
  put(body, 'frequency_penalty', hub.frequencyPenalty)
  put(body, 'reasoning_effort', hub.reasoning && effortOf(hub.reasoning))
  put(body, 'parallel_tool_calls', hub.parallelToolCalls)
  return body
}
