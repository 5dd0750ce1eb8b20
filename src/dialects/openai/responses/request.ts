// Responses requests → hub requests, as a client sends them (`upstream-request.ts` writes them for an upstream).

import { carried, unpack } from '../../../translate/carry.js'
import type { HubFunction, HubMessage, HubOutput, HubPart, HubRequest, HubToolChoice } from '../../../translate/hub.js'
import { isEffort } from '../../../translate/hub.js'
import { field, optionalField, payload } from '../../../translate/payload.js'
import {
  absent,
  array,
  at,
  boolean,
  inexpressible,
  type JsonObject,
  object,
  onlyKnown,
  refuse,
  string,
  unchecked,
} from '../../../translate/readers.js'
import { parseArguments, signatureOf } from '../chat-completions/response.js'
import { assistantParts, outputText, systemTexts, userParts } from './content.js'
import { type ResponsesRequest, responsesReasoning, responsesRequest, responsesStreamOptions, responsesText } from './wire.js'

/** Fields that point at what the client's provider keeps: a model of another format has no way to read it. */
const STORED: Readonly<Partial<Record<keyof ResponsesRequest, string>>> = {
  previous_response_id: 'continues a response the upstream stored',
  conversation: 'continues a conversation the upstream stored',
  prompt: 'names a prompt template the upstream stored',
}

/** The one `include` value that changes nothing here: translated answers carry no reasoning items to include it in. */
const HARMLESS_INCLUDE = 'reasoning.encrypted_content'

/** Item fields that only say where an item came from: sent back as received, they change nothing the model reads. */
const PROVENANCE = { id: optionalField(string), status: optionalField(string) }

/** A message item; `type` may be left out (`{ role, content }` is the short form). `content` is read by the role. */
const MESSAGE_ITEM = payload({ type: optionalField(string), role: field(string), content: field(unchecked), ...PROVENANCE })

/** A function call item, as a client sends back the one it was given; `namespace` names the group its function is in. */
const FUNCTION_CALL_ITEM = payload({
  type: field(string),
  call_id: field(string),
  name: field(string),
  arguments: field(string),
  namespace: optionalField(string),
  extra_content: optionalField(unchecked),
  ...PROVENANCE,
})

/** A reasoning item sent back: only its `encrypted_content` matters, and only when the gateway wrote it (`carry.ts`). */
const REASONING_ITEM = payload({
  type: field(string),
  encrypted_content: optionalField(string),
  summary: optionalField(unchecked),
  content: optionalField(unchecked),
  ...PROVENANCE,
})

/**
 * The name a function of a namespace goes by in another format, where names are flat: its namespace and its own
 * name, joined by `__` (a name every format takes).
 */
export const namespaced = (namespace: string, name: string) => `${namespace}__${name}`

/** A function's output, answering a call item by its `call_id`. */
const FUNCTION_OUTPUT_ITEM = payload({ type: field(string), call_id: field(string), output: field(unchecked), ...PROVENANCE })

/** Refuses `field` of the object at `path` unless it is absent or a value that changes nothing upstream. */
function neutral(body: JsonObject, field: string, allowed: (value: unknown) => boolean, what: string, path = ''): void {
  if (!absent(body[field]) && !allowed(body[field])) inexpressible(at(path, field), what)
}

/** Builds the hub conversation from `input` items: assistant items in a row form one turn, tool outputs in a row another. */
class Conversation {
  readonly system: string[] = []
  readonly messages: HubMessage[] = []
  /** Reasoning items only their own provider can read: left out, and named. */
  readonly dropped: string[] = []
  /** A function output names only its call's id; the function's name comes from the call item that made it. */
  private readonly callNames = new Map<string, string>()
  /** The signature a reasoning item carried for the function call after it. */
  private signature: string | undefined

  private turn(role: HubMessage['role'], join: (last: HubMessage) => boolean): HubMessage {
    const last = this.messages[this.messages.length - 1]
    if (last?.role === role && join(last)) return last
    const message: HubMessage = { role, parts: [] }
    this.messages.push(message)
    return message
  }

  message(item: JsonObject, path: string): void {
    onlyKnown(item, MESSAGE_ITEM.known, path)
    const role = MESSAGE_ITEM.read(item, 'role', path)
    if (role === 'system' || role === 'developer') {
      if (this.messages.length > 0) inexpressible(at(path, 'role'), 'is a system message after the conversation started')
      this.system.push(...systemTexts(item.content, at(path, 'content')))
    } else if (role === 'user') {
      this.messages.push({ role: 'user', parts: userParts(item.content, at(path, 'content')) })
    } else if (role === 'assistant') {
      this.turn('assistant', () => true).parts.push(...assistantParts(item.content, at(path, 'content')))
    } else {
      inexpressible(at(path, 'role'), `is '${role}'`)
    }
  }

  functionCall(item: JsonObject, path: string): void {
    onlyKnown(item, FUNCTION_CALL_ITEM.known, path)
    const id = FUNCTION_CALL_ITEM.read(item, 'call_id', path)
    const own = FUNCTION_CALL_ITEM.read(item, 'name', path)
    const namespace = FUNCTION_CALL_ITEM.read(item, 'namespace', path)
    const name = namespace === undefined ? own : namespaced(namespace, own)
    const args = parseArguments(FUNCTION_CALL_ITEM.read(item, 'arguments', path), at(path, 'arguments'))
    this.callNames.set(id, name)
    const { reasoning, signature } = unpack(signatureOf(item))
    const parts = this.turn('assistant', () => true).parts
    parts.push(...reasoning, { type: 'tool_call', id, name, args, signature: signature ?? this.signature })
    this.signature = undefined
  }

  reasoning(item: JsonObject, path: string): void {
    onlyKnown(item, REASONING_ITEM.known, path)
    const token = REASONING_ITEM.read(item, 'encrypted_content', path)
    const packed = token === undefined ? undefined : carried(token)
    // Reasoning another provider encrypted: no model of another format can read it.
    if (!packed) {
      this.dropped.push(path)
      return
    }
    this.turn('assistant', () => true).parts.push(...packed.reasoning)
    this.signature = packed.signature ?? this.signature
  }

  functionOutput(item: JsonObject, path: string): void {
    onlyKnown(item, FUNCTION_OUTPUT_ITEM.known, path)
    const id = FUNCTION_OUTPUT_ITEM.read(item, 'call_id', path)
    const name = this.callNames.get(id)
    if (name === undefined) refuse(at(path, 'call_id'), `'${path}.call_id' matches no function_call item before it.`)
    const text = outputText(item.output, at(path, 'output'))
    const result: HubPart = { type: 'tool_result', id, name, output: { kind: 'text', text }, error: false }
    // Outputs in a row answer one model turn together: one user turn, as Gemini wants them.
    this.turn('user', (last) => last.parts.every((part) => part.type === 'tool_result')).parts.push(result)
  }
}

function conversation(input: string | unknown[], instructions: string | undefined): Conversation {
  const built = new Conversation()
  if (instructions !== undefined) built.system.push(instructions)
  if (typeof input === 'string') {
    built.messages.push({ role: 'user', parts: [{ type: 'text', text: input }] })
    return built
  }
  input.forEach((value, i) => {
    const path = `input[${i}]`
    const item = object(value, path)
    // A message may leave out its type: `{ role, content }` is the short form.
    const type = item.type ?? (item.role === undefined ? undefined : 'message')
    if (type === 'message') built.message(item, path)
    else if (type === 'function_call') built.functionCall(item, path)
    else if (type === 'function_call_output') built.functionOutput(item, path)
    else if (type === 'item_reference')
      refuse(path, `'${path}' refers to an item the upstream stored, which a model of another format cannot read; send the item itself.`)
    else if (type === 'reasoning') built.reasoning(item, path)
    else inexpressible(at(path, 'type'), `is '${String(type)}'`)
  })
  return built
}

/** A function tool, the one kind of tool another format has. */
const FUNCTION_TOOL = payload({
  type: field(unchecked),
  name: field(string),
  description: optionalField(string),
  parameters: optionalField(object),
  strict: optionalField(boolean),
})

/** A namespace of functions: another format gets each function under its namespaced name (see `namespaced`). */
const NAMESPACE_TOOL = payload({ type: field(unchecked), name: field(string), description: optionalField(string), tools: field(array) })

/**
 * Hosted tools another format's provider cannot run, offered to the model rather than asked of it: without them the
 * model answers from what it knows, so they are dropped and named, not refused (Codex offers web search on every call).
 */
const OFFERED_TOOLS = new Set(['web_search', 'web_search_preview'])

/** A function tool, `namespace` and its description prefixed when it is one of a namespace's. */
function functionTool(
  item: unknown,
  path: string,
  namespace?: { name: string; description: string | undefined },
): HubFunction & { strict: boolean } {
  const tool = object(item, path)
  if (tool.type !== 'function') inexpressible(at(path, 'type'), `is '${String(tool.type)}', a tool the upstream's format does not have`)
  onlyKnown(tool, FUNCTION_TOOL.known, path)
  const name = FUNCTION_TOOL.read(tool, 'name', path)
  const description = FUNCTION_TOOL.read(tool, 'description', path)
  return {
    name: namespace ? namespaced(namespace.name, name) : name,
    // The namespace's description is what the model reads of the group: it stays with each of its functions.
    description: namespace?.description === undefined ? description : [namespace.description, description].filter(Boolean).join('\n\n'),
    parameters: FUNCTION_TOOL.read(tool, 'parameters', path),
    // Unlike chat completions, a Responses function is strict unless it says otherwise.
    strict: tool.strict !== false,
  }
}

function tools(list: unknown[] | undefined, dropped: string[]): { tools: HubFunction[]; strict: boolean } {
  if (list === undefined) return { tools: [], strict: false }
  const functions: (HubFunction & { strict: boolean; path: string })[] = []
  list.forEach((item, i) => {
    const path = `tools[${i}]`
    const tool = object(item, path)
    if (typeof tool.type === 'string' && OFFERED_TOOLS.has(tool.type)) {
      dropped.push(path)
      return
    }
    if (tool.type !== 'namespace') {
      functions.push({ ...functionTool(tool, path), path: at(path, 'strict') })
      return
    }
    onlyKnown(tool, NAMESPACE_TOOL.known, path)
    const namespace = { name: NAMESPACE_TOOL.read(tool, 'name', path), description: NAMESPACE_TOOL.read(tool, 'description', path) }
    NAMESPACE_TOOL.read(tool, 'tools', path).forEach((member, j) => {
      const where = at(at(path, 'tools'), j)
      functions.push({ ...functionTool(member, where, namespace), path: at(where, 'strict') })
    })
  })
  const strict = functions.filter((fn) => fn.strict)
  if (strict.length > 0 && strict.length < functions.length) {
    const odd = functions.find((fn) => fn.strict !== functions[0]?.strict)
    inexpressible(odd?.path ?? 'tools', 'differs between tools (strict schemas are all or none upstream)')
  }
  return {
    tools: functions.map(({ name, description, parameters }) => ({ name, description, parameters })),
    strict: functions.length > 0 && strict.length === functions.length,
  }
}

function functionName(value: unknown, path: string): string {
  const tool = object(value, path)
  if (tool.type !== 'function') inexpressible(at(path, 'type'), `is '${String(tool.type)}', not 'function'`)
  return string(tool.name, at(path, 'name'))
}

function toolChoice(value: unknown): HubToolChoice | undefined {
  if (value === undefined) return undefined
  if (value === 'auto' || value === 'none' || value === 'required') return { mode: value, only: undefined }
  const choice = object(value, 'tool_choice')
  if (choice.type === 'function') return { mode: 'required', only: [functionName(choice, 'tool_choice')] }
  if (choice.type === 'allowed_tools') {
    if (choice.mode !== 'required')
      inexpressible('tool_choice.mode', "narrows the tools without requiring a call (only 'required' can be translated)")
    const names = array(choice.tools, 'tool_choice.tools').map((tool, i) => functionName(tool, `tool_choice.tools[${i}]`))
    return { mode: 'required', only: names }
  }
  return inexpressible('tool_choice.type', `is '${String(choice.type)}', a tool the upstream's format does not have`)
}

/** `text.format` of type `json_schema`. */
const JSON_SCHEMA_FORMAT = payload({
  type: field(string),
  name: optionalField(string),
  description: optionalField(string),
  schema: optionalField(object),
  strict: optionalField(boolean),
})

function output(text: JsonObject | undefined): HubOutput | undefined {
  if (text === undefined) return undefined
  neutral(text, 'verbosity', (v) => v === 'medium', 'asks for a verbosity other than medium', 'text')
  const format = responsesText.read(text, 'format', 'text')
  if (format === undefined || format.type === 'text') return undefined
  if (format.type === 'json_object') return { type: 'json' }
  if (format.type !== 'json_schema') return inexpressible('text.format.type', `is '${String(format.type)}'`)
  onlyKnown(format, JSON_SCHEMA_FORMAT.known, 'text.format')
  return {
    type: 'json_schema',
    name: JSON_SCHEMA_FORMAT.read(format, 'name', 'text.format'),
    description: JSON_SCHEMA_FORMAT.read(format, 'description', 'text.format'),
    schema: JSON_SCHEMA_FORMAT.read(format, 'schema', 'text.format') ?? { type: 'object' },
    strict: format.strict === true,
  }
}

/** `auto`: summaries if the provider makes them, a hint; a named kind of summary is asked for, and refused. */
const SUMMARY_HINT = 'auto'

function effort(reasoning: JsonObject | undefined, dropped: string[]): HubRequest['reasoning'] {
  if (reasoning === undefined) return undefined
  for (const key of ['summary', 'generate_summary']) {
    if (reasoning[key] === SUMMARY_HINT) dropped.push(at('reasoning', key))
    else neutral(reasoning, key, () => false, 'asks for reasoning summaries', 'reasoning')
  }
  const named = responsesReasoning.read(reasoning, 'effort', 'reasoning')
  if (named === undefined) return undefined
  if (!isEffort(named)) inexpressible('reasoning.effort', `is '${named}'`)
  return { effort: named }
}

/** Reads a Responses request into the hub; refuses, by field, what the hub cannot hold or what needs the upstream's storage. */
export function responsesRequestToHub(body: JsonObject): HubRequest {
  onlyKnown(body, responsesRequest.known, '')
  for (const [field, what] of Object.entries(STORED)) {
    if (!absent(body[field]))
      refuse(field, `'${field}' ${what}, which a model of another format cannot read; send the whole conversation in 'input'.`)
  }
  neutral(body, 'background', (v) => v === false, 'asks for a background response, kept by the upstream to be fetched later')
  neutral(body, 'truncation', (v) => v === 'disabled', 'asks the upstream to drop earlier turns that do not fit')
  neutral(body, 'top_logprobs', (v) => v === 0, 'asks for log probabilities')
  const dropped = responsesRequest.hinted(body)
  const include = responsesRequest.read(body, 'include') ?? []
  include.forEach((value, i) => {
    if (string(value, `include[${i}]`) !== HARMLESS_INCLUDE) inexpressible(`include[${i}]`, `asks for '${String(value)}'`)
  })
  const streamOptions = responsesRequest.read(body, 'stream_options')
  if (streamOptions) responsesStreamOptions.read(streamOptions, 'include_obfuscation', 'stream_options')
  // Checked before the rest of the input: an absent one is refused as missing, not as the wrong type.
  if (absent(body.input)) refuse('input', "'input' is required.")
  const instructions = responsesRequest.read(body, 'instructions')
  const built = conversation(responsesRequest.read(body, 'input'), instructions)
  dropped.push(...built.dropped)
  const declared = tools(responsesRequest.read(body, 'tools'), dropped)
  const text = responsesRequest.read(body, 'text')
  const parallel = responsesRequest.read(body, 'parallel_tool_calls')
  const fields: HubRequest['fields'] = {}
  if (text?.format !== undefined) fields.output = 'text.format'
  if (parallel === false) fields.parallelToolCalls = 'parallel_tool_calls'
  if (!absent(body.tool_choice)) fields.toolChoice = 'tool_choice'
  if (!absent(body.temperature)) fields.temperature = 'temperature'
  if (!absent(body.top_p)) fields.topP = 'top_p'
  fields.reasoning = 'reasoning.effort'
  return {
    system: built.system,
    messages: built.messages,
    tools: declared.tools,
    strictTools: declared.strict,
    toolChoice: toolChoice(responsesRequest.read(body, 'tool_choice')),
    output: output(text),
    temperature: responsesRequest.read(body, 'temperature'),
    topP: responsesRequest.read(body, 'top_p'),
    maxOutputTokens: responsesRequest.read(body, 'max_output_tokens'),
    stop: undefined,
    candidates: undefined,
    seed: undefined,
    presencePenalty: undefined,
    frequencyPenalty: undefined,
    reasoning: effort(responsesRequest.read(body, 'reasoning'), dropped),
    topK: undefined,
    parallelToolCalls: parallel === false ? false : undefined,
    showReasoning: undefined,
    // A Responses stream always ends with the whole response, its usage included.
    includeUsage: true,
    fields,
    dropped,
    clamped: [],
  }
}
