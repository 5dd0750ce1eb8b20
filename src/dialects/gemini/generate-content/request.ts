// Generate-content requests ⇄ hub requests.

import { isObject } from '../../../json/value.js'
import { unpack } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type {
  HubFunction,
  HubMessage,
  HubOutput,
  HubPart,
  HubReasoning,
  HubRequest,
  HubToolChoice,
  HubToolOutput,
} from '../../../translate/hub.js'
import { type HubOptional, isEffort, lacking, mediaClass } from '../../../translate/hub.js'
import { field, optionalField, payload } from '../../../translate/payload.js'
import {
  absent,
  array,
  at,
  inexpressible,
  isStrings,
  type JsonObject,
  object,
  optional,
  put,
  refuse,
  string,
  unchecked,
} from '../../../translate/readers.js'
import { declaresNothing, fromGeminiSchema, toGeminiSchema } from '../schema.js'
import { thinkingBudget } from './thinking.js'
import {
  type GeminiCallingMode,
  type GeminiContent,
  type GeminiFunctionDeclaration,
  type GeminiGenerationConfig,
  type GeminiPart,
  type GeminiRequest,
  type GeminiThinkingConfig,
  geminiFunctionCallingConfig,
  geminiGenerationConfig,
  geminiRequest,
  geminiSystemInstruction,
  geminiThinkingConfig,
  message,
  PROTOBUF,
} from './wire.js'

/** Files uploaded to Google's Files API live on its own host; no other upstream can fetch them. */
const GOOGLE_FILES = /^https:\/\/generativelanguage\.googleapis\.com\//i

/** An id for a call that came without one: stable for the same history, unique within it. */
const callId = (content: number, part: number) => `call_${content}_${part}`

/** A part of the system instruction: text alone. */
const TEXT_PART = payload({ text: field(string) }, PROTOBUF)
const INLINE_DATA = payload({ mimeType: field(string), data: field(string) }, PROTOBUF)
const FILE_DATA = payload({ mimeType: optionalField(string), fileUri: field(string) }, PROTOBUF)
const FUNCTION_CALL = payload({ id: optionalField(string), name: field(string), args: optionalField(object) }, PROTOBUF)
const FUNCTION_RESPONSE = payload({ id: optionalField(string), name: field(string), response: field(object) }, PROTOBUF)
/** One turn; a turn without a role is the user's. */
const CONTENT = payload({ role: optionalField(string), parts: field(array) }, PROTOBUF)
/** A tool: function declarations are the one kind another format has. */
const TOOL = payload({ functionDeclarations: field(array) }, PROTOBUF)
/** `parameters` is read by `fromGeminiSchema`, which names what it cannot take. */
const FUNCTION_DECLARATION = payload(
  {
    name: field(string),
    description: optionalField(string),
    parameters: optionalField(unchecked),
    parametersJsonSchema: optionalField(object),
  },
  PROTOBUF,
)

function textOf(value: unknown, path: string): string {
  return TEXT_PART.read(TEXT_PART.object(value, path), 'text', path)
}

function system(instruction: JsonObject | undefined): string[] {
  if (instruction === undefined) return []
  const parts = geminiSystemInstruction.read(instruction, 'parts', 'systemInstruction')
  return parts.map((part, i) => textOf(part, `systemInstruction.parts[${i}]`))
}

interface Pending {
  id: string
  name: string
}

/**
 * A part, preceded by the reasoning of another format's model its thought signature carried (see `carry.ts`). A
 * model turn's thought summary (`thought: true`, as the gateway writes for `includeThoughts`) is left out: what it
 * summarises comes back whole in the signature the part after it carries, and no other format takes a summary back.
 */
function parts(value: unknown, path: string, role: 'user' | 'assistant', pending: Pending[], fallbackId: string): HubPart[] {
  const item = message(value, path)
  // A thought signature is for Gemini alone and changes nothing another model says, so it is not refused.
  const { reasoning, signature } = unpack(optional(item, 'thoughtSignature', path, string))
  if (item.thought === true && role === 'assistant') return reasoning
  return [...reasoning, part(item, path, role, pending, fallbackId, signature)]
}

function part(
  item: JsonObject,
  path: string,
  role: 'user' | 'assistant',
  pending: Pending[],
  fallbackId: string,
  signature: string | undefined,
): HubPart {
  if (item.thought === true) inexpressible(at(path, 'thought'), 'is a thought summary in a user turn')
  const { thought: _thought, thoughtSignature: _signature, ...data } = item
  const key = Object.keys(data)[0]
  if (Object.keys(data).length !== 1 || key === undefined) refuse(path, `'${path}' must hold exactly one kind of data.`)
  const where = at(path, key)
  if (key === 'text') return { type: 'text', text: string(data.text, where) }
  if (key === 'inlineData') {
    const inline = INLINE_DATA.object(data.inlineData, where)
    const mimeType = INLINE_DATA.read(inline, 'mimeType', where).toLowerCase()
    if (mediaClass(mimeType) === undefined) inexpressible(at(where, 'mimeType'), `is '${mimeType}'`)
    return { type: 'media', media: { kind: 'inline', mimeType, data: INLINE_DATA.read(inline, 'data', where) }, filename: undefined }
  }
  if (key === 'fileData') {
    const file = FILE_DATA.object(data.fileData, where)
    const url = FILE_DATA.read(file, 'fileUri', where)
    if (!/^https?:\/\//i.test(url) || GOOGLE_FILES.test(url)) inexpressible(at(where, 'fileUri'), 'is not a public http(s) URL')
    const mimeType = FILE_DATA.read(file, 'mimeType', where)?.toLowerCase()
    if (mimeType !== undefined && mediaClass(mimeType) !== 'image')
      inexpressible(at(where, 'mimeType'), `is '${mimeType}' (only images go by URL)`)
    return { type: 'media', media: { kind: 'url', url, mimeType }, filename: undefined }
  }
  if (key === 'functionCall' && role === 'assistant') {
    const call = FUNCTION_CALL.object(data.functionCall, where)
    const id = FUNCTION_CALL.read(call, 'id', where) ?? fallbackId
    const name = FUNCTION_CALL.read(call, 'name', where)
    pending.push({ id, name })
    return { type: 'tool_call', id, name, args: FUNCTION_CALL.read(call, 'args', where) ?? {}, signature }
  }
  if (key === 'functionResponse' && role === 'user') {
    const response = FUNCTION_RESPONSE.object(data.functionResponse, where)
    const name = FUNCTION_RESPONSE.read(response, 'name', where)
    const id = FUNCTION_RESPONSE.read(response, 'id', where)
    // Gemini matches a response to its call by name (in order); the upstream needs the call's id.
    const match = pending.findIndex((call) => (id === undefined || call.id === id) && call.name === name)
    const call = pending[match]
    if (call === undefined) refuse(at(where, 'name'), `'${where}' answers no function call of the model turn before it.`)
    pending.splice(match, 1)
    const value = FUNCTION_RESPONSE.read(response, 'response', where)
    // `error` alone is how Google documents a failed function's response.
    const keys = Object.keys(value)
    if (keys.length === 1 && keys[0] === 'error' && typeof value.error === 'string')
      return { type: 'tool_result', id: call.id, name, output: { kind: 'text', text: value.error }, error: true }
    return { type: 'tool_result', id: call.id, name, output: { kind: 'json', value }, error: false }
  }
  return inexpressible(where, `is '${key}' data in a ${role === 'user' ? 'user' : 'model'} turn`)
}

function conversation(contents: unknown[]): HubMessage[] {
  let pending: Pending[] = []
  return contents.map((item, i) => {
    const path = `contents[${i}]`
    const content = CONTENT.object(item, path)
    const role = CONTENT.read(content, 'role', path) ?? 'user'
    if (role !== 'user' && role !== 'model') inexpressible(at(path, 'role'), `is '${role}'`)
    const hubRole = role === 'model' ? 'assistant' : 'user'
    if (hubRole === 'assistant') pending = []
    const read = CONTENT.read(content, 'parts', path).flatMap((p, j) => parts(p, at(at(path, 'parts'), j), hubRole, pending, callId(i, j)))
    return { role: hubRole, parts: read }
  })
}

function functions(tools: unknown[] | undefined): HubFunction[] {
  if (tools === undefined) return []
  return tools.flatMap((item, i) => {
    const path = `tools[${i}]`
    const tool = TOOL.object(item, path)
    return TOOL.read(tool, 'functionDeclarations', path).map((decl, j): HubFunction => {
      const where = at(at(path, 'functionDeclarations'), j)
      const fn = FUNCTION_DECLARATION.object(decl, where)
      if (!absent(fn.parameters) && !absent(fn.parametersJsonSchema))
        refuse(at(where, 'parametersJsonSchema'), `'${where}' may have 'parameters' or 'parametersJsonSchema', not both.`)
      const parameters = absent(fn.parameters)
        ? FUNCTION_DECLARATION.read(fn, 'parametersJsonSchema', where)
        : fromGeminiSchema(fn.parameters, at(where, 'parameters'))
      const name = FUNCTION_DECLARATION.read(fn, 'name', where)
      return { name, description: FUNCTION_DECLARATION.read(fn, 'description', where), parameters }
    })
  })
}

function toolChoice(toolConfig: JsonObject | undefined): { choice: HubToolChoice; strict: boolean } | undefined {
  if (toolConfig === undefined) return undefined
  const path = 'toolConfig.functionCallingConfig'
  const config = geminiFunctionCallingConfig.object(toolConfig.functionCallingConfig, path)
  const mode = geminiFunctionCallingConfig.read(config, 'mode', path) ?? 'AUTO'
  const names = geminiFunctionCallingConfig.read(config, 'allowedFunctionNames', path)
  if (mode === 'ANY') return { choice: { mode: 'required', only: names }, strict: false }
  if (names !== undefined) inexpressible('toolConfig.functionCallingConfig.allowedFunctionNames', `narrows the functions in mode ${mode}`)
  if (mode === 'AUTO' || mode === 'MODE_UNSPECIFIED') return { choice: { mode: 'auto', only: undefined }, strict: false }
  if (mode === 'NONE') return { choice: { mode: 'none', only: undefined }, strict: false }
  if (mode === 'VALIDATED') return { choice: { mode: 'auto', only: undefined }, strict: true }
  return inexpressible('toolConfig.functionCallingConfig.mode', `is '${mode}'`)
}

function output(config: JsonObject): HubOutput | undefined {
  const mime = geminiGenerationConfig.read(config, 'responseMimeType', 'generationConfig') ?? 'text/plain'
  const hasSchema = !absent(config.responseSchema) || !absent(config.responseJsonSchema)
  if (mime === 'text/plain' && !hasSchema) return undefined
  if (mime !== 'application/json') inexpressible('generationConfig.responseMimeType', `is '${mime}'`)
  if (!absent(config.responseSchema) && !absent(config.responseJsonSchema))
    refuse('generationConfig.responseJsonSchema', "'responseSchema' and 'responseJsonSchema' exclude each other.")
  const schema = absent(config.responseSchema)
    ? geminiGenerationConfig.read(config, 'responseJsonSchema', 'generationConfig')
    : fromGeminiSchema(config.responseSchema, 'generationConfig.responseSchema')
  // Gemini holds the answer to its schema; OpenAI's strict mode adds rules of its own a Gemini schema need not meet.
  return schema ? { type: 'json_schema', name: undefined, description: undefined, schema, strict: false } : { type: 'json' }
}

function reasoning(config: JsonObject | undefined): HubReasoning | undefined {
  if (config === undefined) return undefined
  const budget = geminiThinkingConfig.read(config, 'thinkingBudget', 'generationConfig.thinkingConfig')
  const level = geminiThinkingConfig.read(config, 'thinkingLevel', 'generationConfig.thinkingConfig')?.toLowerCase()
  if (budget !== undefined && level !== undefined)
    refuse('generationConfig.thinkingConfig.thinkingLevel', "'thinkingBudget' and 'thinkingLevel' exclude each other.")
  if (level !== undefined) {
    // Gemini's levels are a subset of the efforts, by the same names.
    if (!isEffort(level) || level === 'none' || level === 'xhigh' || level === 'max')
      inexpressible('generationConfig.thinkingConfig.thinkingLevel', `is '${level}'`)
    return { effort: level }
  }
  return budget === undefined ? undefined : { budget }
}

/** Reads a generate-content request into the hub; refuses what the hub cannot hold, by field. */
export function geminiRequestToHub(fields: JsonObject): HubRequest {
  const body = geminiRequest.object(fields, '')
  if ((geminiRequest.read(body, 'safetySettings')?.length ?? 0) > 0) inexpressible('safetySettings', 'sets safety thresholds')
  const config = geminiRequest.read(body, 'generationConfig') ?? {}
  const modalities = config.responseModalities
  if (!absent(modalities) && !(isStrings(modalities) && modalities.every((m) => m === 'TEXT'))) {
    inexpressible('generationConfig.responseModalities', 'asks for output other than text')
  }
  const tools = functions(geminiRequest.read(body, 'tools'))
  const choice = toolChoice(geminiRequest.read(body, 'toolConfig'))
  const read = <K extends keyof GeminiGenerationConfig & string>(key: K) => geminiGenerationConfig.read(config, key, 'generationConfig')
  const sources: HubRequest['fields'] = {}
  for (const [member, key] of SOURCES) if (!absent(config[key])) sources[member] = `generationConfig.${key}`
  const thinking = read('thinkingConfig')
  if (thinking?.includeThoughts === true) sources.showReasoning = 'generationConfig.thinkingConfig.includeThoughts'
  sources.reasoning = `generationConfig.thinkingConfig.${thinking?.thinkingLevel === undefined ? 'thinkingBudget' : 'thinkingLevel'}`
  if (choice?.choice.only !== undefined) sources.toolChoice = 'toolConfig.functionCallingConfig.allowedFunctionNames'
  return {
    system: system(geminiRequest.read(body, 'systemInstruction')),
    messages: conversation(geminiRequest.read(body, 'contents')),
    tools,
    strictTools: choice?.strict ?? false,
    toolChoice: choice?.choice,
    output: output(config),
    temperature: read('temperature'),
    topP: read('topP'),
    maxOutputTokens: read('maxOutputTokens'),
    stop: read('stopSequences'),
    candidates: read('candidateCount'),
    seed: read('seed'),
    presencePenalty: read('presencePenalty'),
    frequencyPenalty: read('frequencyPenalty'),
    reasoning: reasoning(thinking),
    topK: read('topK'),
    parallelToolCalls: undefined,
    showReasoning: thinking?.includeThoughts === true ? true : undefined,
    // A Gemini stream carries usage in its events whatever the request says.
    includeUsage: true,
    fields: sources,
    dropped: [],
    clamped: [],
  }
}

/** The hub members another format may lack, by the `generationConfig` field that sets each. */
const SOURCES: readonly [HubOptional, keyof GeminiGenerationConfig & string][] = [
  ['candidates', 'candidateCount'],
  ['seed', 'seed'],
  ['presencePenalty', 'presencePenalty'],
  ['frequencyPenalty', 'frequencyPenalty'],
  ['topK', 'topK'],
  ['output', 'responseMimeType'],
  ['stop', 'stopSequences'],
  ['temperature', 'temperature'],
  ['topP', 'topP'],
]

function partOf(part: HubPart): GeminiPart | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { text: part.text }
    case 'media':
      return part.media.kind === 'inline'
        ? { inlineData: { mimeType: part.media.mimeType, data: part.media.data } }
        : { fileData: part.media.mimeType ? { mimeType: part.media.mimeType, fileUri: part.media.url } : { fileUri: part.media.url } }
    case 'tool_call': {
      const call: GeminiPart = { functionCall: { id: part.id, name: part.name, args: part.args } }
      if (part.signature !== undefined) call.thoughtSignature = part.signature
      return call
    }
    case 'tool_result':
      return { functionResponse: { id: part.id, name: part.name, response: toolResponse(part.output, part.error) } }
    case 'reasoning':
      // Another format's reasoning: Gemini cannot read it.
      return undefined
  }
}

/**
 * A tool's text as Gemini's `response` object: JSON objects as they are, anything else under `output` (a failure's
 * under `error`), as Google documents.
 */
function toolResponse(output: HubToolOutput, error: boolean): Record<string, unknown> {
  if (output.kind === 'json') return output.value
  if (error) return { error: output.text }
  try {
    const parsed: unknown = JSON.parse(output.text)
    if (isObject(parsed)) return parsed
  } catch {
    // Plain text: wrapped below.
  }
  return { output: output.text }
}

function declaration(tool: HubFunction): GeminiFunctionDeclaration {
  const out: GeminiFunctionDeclaration = { name: tool.name }
  put(out, 'description', tool.description)
  const parameters = tool.parameters
  if (parameters === undefined || declaresNothing(parameters)) return out
  const subset = toGeminiSchema(parameters)
  if (subset) out.parameters = subset
  else out.parametersJsonSchema = parameters
  return out
}

function generationConfig(hub: HubRequest, model: string): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {}
  put(config, 'temperature', hub.temperature)
  put(config, 'topP', hub.topP)
  put(config, 'maxOutputTokens', hub.maxOutputTokens)
  put(config, 'stopSequences', hub.stop)
  put(config, 'candidateCount', hub.candidates)
  put(config, 'seed', hub.seed)
  put(config, 'presencePenalty', hub.presencePenalty)
  put(config, 'frequencyPenalty', hub.frequencyPenalty)
  put(config, 'topK', hub.topK)
  const output = hub.output
  if (output) config.responseMimeType = 'application/json'
  if (output?.type === 'json_schema') {
    // Gemini has no schema name; the description steers the answer, so it joins the schema's own.
    const own = typeof output.schema.description === 'string' ? output.schema.description : undefined
    const described =
      output.description === undefined
        ? output.schema
        : { ...output.schema, description: own ? `${output.description}\n\n${own}` : output.description }
    const subset = toGeminiSchema(described)
    if (subset) config.responseSchema = subset
    else config.responseJsonSchema = described
  }
  if (hub.reasoning) {
    const thinking: GeminiThinkingConfig = { thinkingBudget: thinkingBudget(hub, hub.reasoning, model) }
    if (hub.showReasoning) thinking.includeThoughts = true
    config.thinkingConfig = thinking
  }
  return Object.keys(config).length > 0 ? config : undefined
}

/** Writes a hub request as a generate-content request for the upstream (the model goes in the path). */
export function geminiRequestFromHub(hub: HubRequest, plan: CallPlan): GeminiRequest {
  if (hub.parallelToolCalls === false) lacking(hub, 'parallelToolCalls', 'turns parallel tool calls off')
  const body: GeminiRequest = {
    // A system message mid-conversation has no place of its own in Gemini: it is said as the user's, where it stands.
    contents: hub.messages.map(
      (message): GeminiContent => ({
        role: message.role === 'assistant' ? 'model' : 'user',
        parts: message.parts.flatMap((part) => partOf(part) ?? []),
      }),
    ),
  }
  if (hub.system.length > 0) body.systemInstruction = { parts: hub.system.map((text) => ({ text })) }
  if (hub.tools.length > 0) body.tools = [{ functionDeclarations: hub.tools.map(declaration) }]
  const choice = hub.toolChoice
  if (choice || hub.strictTools) {
    const mode: GeminiCallingMode =
      choice?.mode === 'none' ? 'NONE' : choice?.mode === 'required' ? 'ANY' : hub.strictTools ? 'VALIDATED' : 'AUTO'
    body.toolConfig = { functionCallingConfig: choice?.only ? { mode, allowedFunctionNames: choice.only } : { mode } }
  }
  const config = generationConfig(hub, plan.upstreamModel)
  if (config) body.generationConfig = config
  return body
}
