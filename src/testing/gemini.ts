// The Gemini generate-content wire format: routes, key errors, replies, and both stream framings.

import type { ServerResponse } from 'node:http'
import { GOOGLE_RPC_CODES } from '../dialects/gemini/status.js'
import { isObject } from '../json/value.js'
import { type State, send, stream } from './respond.js'
import { imageNote, sampleOf, toolArguments, toolReply } from './schema.js'
import { chunkCount, controlledText, JSON_TYPE, type JsonObject, splitText, tokens } from './shared.js'

const SSE_TYPE_GEMINI = 'text/event-stream'

/** Content type Google sends its JSON answers (errors included) with. */
export const GEMINI_JSON_TYPE = 'application/json; charset=UTF-8'

/** A Gemini call as the mock routed it: its path, its model as the path has it (undecoded) and its method. */
export type GeminiRoute = readonly [path: string, model: string, method: string]

/** One violation of a request's fields, as Google's `BadRequest` details list them. */
export interface Violation {
  field?: string
  description: string
}

function googleError(status: number, message: string) {
  return { error: { code: status, message, status: GOOGLE_RPC_CODES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } }
}

/** Body Google answers a request without any key with. */
export const GOOGLE_MISSING_KEY = JSON.stringify(
  googleError(
    401,
    'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  ),
)

/** Body Google answers a wrong key with (a 400, not a 401). */
export const GOOGLE_BAD_KEY = JSON.stringify({
  error: {
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ],
  },
})

/** Body Google answers a request body that is not a JSON object with. */
export const GOOGLE_BAD_JSON = JSON.stringify(googleError(400, 'Invalid JSON payload received.'))

/** Answer an error in Google's shape. */
export function sendGoogleError(res: ServerResponse, st: State, status: number, message: string): void {
  send(res, st, status, GEMINI_JSON_TYPE, JSON.stringify(googleError(status, message)))
}

const snakeNames = new Map<string, string>()

/** lowerCamelCase to snake_case: Google's JSON parser takes a field by either name. */
function snake(name: string): string {
  let out = snakeNames.get(name)
  if (out === undefined) {
    // Cached: the mock shares a core with the benchmarks' load generator.
    out = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
    snakeNames.set(name, out)
  }
  return out
}

/** A set of field names under both spellings Google's JSON parser takes. */
export const bothSpellings = (names: string[]): Set<string> => new Set(names.flatMap((n) => [n, snake(n)]))

/** The fields of a GenerateContentRequest, and the mock's own `mock`: anything else is refused, as Google does. */
export const REQUEST_FIELDS = bothSpellings([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'labels',
  'mock',
])

/** The fields of a GenerationConfig. */
const CONFIG_FIELDS = bothSpellings([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
])

/** A field under either of its names. */
export const field = (obj: JsonObject, name: string): unknown => obj[name] ?? obj[snake(name)]

/** One violation per field of `obj` that `known` does not hold, as Google words them (`at` names the nested message). */
export function unknownNames(obj: JsonObject, known: Set<string>, at?: string): Violation[] {
  return Object.keys(obj)
    .filter((k) => !known.has(k))
    .map((k) =>
      at === undefined
        ? { description: `Invalid JSON payload received. Unknown name "${k}": Cannot find field.` }
        : { field: at, description: `Invalid JSON payload received. Unknown name "${k}" at '${at}': Cannot find field.` },
    )
}

/** Google's 400 for invalid fields, as a body, or undefined when there are none. */
export function badRequestBody(violations: Violation[]): string | undefined {
  if (violations.length === 0) return undefined
  const error = {
    code: 400,
    message: violations.map((v) => v.description).join('\n'),
    status: 'INVALID_ARGUMENT',
    details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations }],
  }
  return JSON.stringify({ error })
}

/** Google's 400 for fields it does not know (one violation per field), or undefined; `known` is the request's own fields. */
export function unknownFields(body: JsonObject, known: Set<string> = REQUEST_FIELDS): string | undefined {
  const violations = unknownNames(body, known)
  const config = field(body, 'generationConfig')
  if (isObject(config)) violations.push(...unknownNames(config, CONFIG_FIELDS, 'generation_config'))
  return badRequestBody(violations)
}

/** Text of a Gemini content object's parts. */
export function geminiText(content: unknown): string {
  if (!isObject(content) || !Array.isArray(content.parts)) return ''
  let s = ''
  for (const p of content.parts) if (isObject(p) && typeof p.text === 'string') s += p.text
  return s
}

/** A generate-content body with the field every request needs. */
type GenerateRequest = JsonObject & { contents: unknown[] }

/** The two generate-content methods: whole, or streamed. */
type GenerateMethod = 'generateContent' | 'streamGenerateContent'

/** What the model answers: text, or a call of one function with its arguments. */
type GenerateAnswer = { text: string } | { call: { name: string; args: JsonObject } }

const isGenerateRequest = (body: JsonObject): body is GenerateRequest => Array.isArray(body.contents)

/**
 * Answer a generate-content request: 400 for a field Google does not know or without `contents`, else the reply,
 * whole or streamed. `route` is the call's path, model and method, `params` the query; `nextSeq` numbers ids uniquely per
 * server and is called only for a reply.
 */
export function answerGenerate(
  route: GeminiRoute,
  params: URLSearchParams | null,
  body: JsonObject,
  ctl: JsonObject,
  res: ServerResponse,
  st: State,
  nextSeq: () => number,
): void {
  const refused = unknownFields(body)
  if (refused !== undefined) {
    send(res, st, 400, GEMINI_JSON_TYPE, refused)
    return
  }
  if (!isGenerateRequest(body)) {
    sendGoogleError(res, st, 400, '* GenerateContentRequest.contents: contents is not specified\n')
    return
  }
  let model = route[1] ?? ''
  try {
    model = decodeURIComponent(model)
  } catch {}
  const method: GenerateMethod = route[2] === 'generateContent' ? 'generateContent' : 'streamGenerateContent'
  geminiGenerate(model, method, params?.get('alt') === 'sse', body, ctl, res, st, nextSeq())
}

/** The parts of a content object. */
const partsOf = (content: unknown): JsonObject[] =>
  isObject(content) && Array.isArray(content.parts) ? content.parts.filter(isObject) : []

/** Image parts: inline bytes or a file of an image type (a file without a type is taken for one). */
function imageCount(content: unknown): number {
  return partsOf(content).filter((p) => {
    const inline = field(p, 'inlineData')
    if (isObject(inline)) return String(field(inline, 'mimeType')).startsWith('image/')
    const file = field(p, 'fileData')
    if (!isObject(file)) return false
    const type = field(file, 'mimeType')
    return type === undefined || String(type).startsWith('image/')
  }).length
}

/** A function declaration with a name. */
type Declaration = JsonObject & { name: string }

const isDeclaration = (d: unknown): d is Declaration => isObject(d) && typeof d.name === 'string'

/** The first function the request declares among the `allowed` names (any, without names), with its parameters' schema. */
function firstFunction(body: JsonObject, allowed: unknown[] | undefined): { name: string; schema: unknown } | undefined {
  const tools = field(body, 'tools')
  if (!Array.isArray(tools)) return undefined
  const decls = tools.flatMap((tool): Declaration[] => {
    const list = isObject(tool) ? field(tool, 'functionDeclarations') : undefined
    return Array.isArray(list) ? list.filter(isDeclaration) : []
  })
  const fn = decls.find((d) => allowed?.includes(d.name)) ?? decls[0]
  return fn && { name: fn.name, schema: field(fn, 'parameters') ?? field(fn, 'parametersJsonSchema') }
}

/**
 * What the model answers: the text a control sets; `Tool said: …` when the last turn carries function responses;
 * a call to the first declared function (the first allowed one, when the tool config names some) when the user
 * spoke last; JSON built from the response schema when JSON is asked for; else the echo of the last user text,
 * with the images it carried counted.
 */
function answerOf(body: GenerateRequest, ctl: JsonObject, lastUser: string): GenerateAnswer {
  const controlled = controlledText(ctl)
  if (controlled !== undefined) return { text: controlled }
  const last = body.contents.at(-1)
  const results = partsOf(last)
    .map((p) => field(p, 'functionResponse'))
    .filter(isObject)
  if (results.length > 0) return { text: toolReply(results.map((r) => JSON.stringify(r.response))) }
  const toolConfig = field(body, 'toolConfig')
  const calling = isObject(toolConfig) ? field(toolConfig, 'functionCallingConfig') : undefined
  const allowed = isObject(calling) ? field(calling, 'allowedFunctionNames') : undefined
  const fn = firstFunction(body, typeof ctl.tool_name === 'string' ? [ctl.tool_name] : Array.isArray(allowed) ? allowed : undefined)
  const lastIsUser = isObject(last) && (last.role === undefined || last.role === 'user')
  if (fn && lastIsUser && !(isObject(calling) && calling.mode === 'NONE')) {
    return { call: { name: fn.name, args: toolArguments(ctl, fn.schema) } }
  }
  const config = field(body, 'generationConfig')
  if (isObject(config) && field(config, 'responseMimeType') === 'application/json') {
    const schema = field(config, 'responseSchema') ?? field(config, 'responseJsonSchema')
    return { text: JSON.stringify(schema === undefined ? { echo: lastUser } : sampleOf(schema)) }
  }
  return { text: `Echo: ${lastUser}${imageNote(lastIsUser ? imageCount(last) : 0)}` }
}

function geminiGenerate(
  model: string,
  method: GenerateMethod,
  sse: boolean,
  body: GenerateRequest,
  ctl: JsonObject,
  res: ServerResponse,
  st: State,
  seq: number,
): void {
  const responseId = `mock-resp-${seq}`
  let promptLen = geminiText(field(body, 'systemInstruction')).length
  let lastUser = ''
  for (const c of body.contents) {
    const t = geminiText(c)
    promptLen += t.length
    if (isObject(c) && (c.role === undefined || c.role === 'user')) lastUser = t
  }
  const answer = answerOf(body, ctl, lastUser)
  const text = 'text' in answer ? answer.text : ''
  const prompt = tokens(promptLen)
  const candidates = tokens('call' in answer ? answer.call.name.length + JSON.stringify(answer.call.args).length : text.length)
  const usageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  }
  if (isObject(ctl.usage)) Object.assign(usageMetadata, ctl.usage)

  // Gemini sends a function call whole, in one part (and one event when streaming), and ends it with STOP.
  // A thinking model signs its calls; the signature must come back with the call in the next turn.
  const signature = typeof ctl.thought_signature === 'string' ? { thoughtSignature: ctl.thought_signature } : {}
  const pieces = 'call' in answer ? [{ functionCall: answer.call, ...signature }] : null
  if (method === 'generateContent') {
    const out = {
      candidates: [{ content: { parts: pieces ?? [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
      modelVersion: model,
      responseId,
    }
    send(res, st, 200, JSON_TYPE, JSON.stringify(out))
    return
  }

  const events: JsonObject[][] = pieces ? [pieces] : splitText(text, Math.max(1, chunkCount(ctl))).map((piece) => [{ text: piece }])
  const last = events.length - 1
  const frames = events.map((parts, i) => {
    const cand: JsonObject = { content: { parts, role: 'model' }, index: 0 }
    const obj: JsonObject = { candidates: [cand] }
    if (i === last) {
      cand.finishReason = 'STOP'
      obj.usageMetadata = usageMetadata
    }
    obj.modelVersion = model
    obj.responseId = responseId
    const json = JSON.stringify(obj)
    if (sse) return `data: ${json}\r\n\r\n`
    // JSON array streamed progressively, as Google does without alt=sse.
    return (i === 0 ? '[' : ',\r\n') + json + (i === last ? ']' : '')
  })
  stream(res, st, sse ? SSE_TYPE_GEMINI : GEMINI_JSON_TYPE, frames, ctl)
}
