// The neutral model every format translates into and out of. It holds what at least one format can say and is
// shaped after neither: a third format costs a reader and a writer of these types, not one translator per pair.

import type { TokenCounts } from '../types.js'
import { inexpressible } from './readers.js'

/** A JSON Schema (draft 2020-12 vocabulary), the hub's one schema language. */
export type JsonSchema = Record<string, unknown>

/** Media bytes carried inline (base64) or by reference. */
export type HubMedia = { kind: 'inline'; mimeType: string; data: string } | { kind: 'url'; url: string; mimeType: string | undefined }

/** What a tool returned: text as given, or a JSON object. */
export type HubToolOutput = { kind: 'text'; text: string } | { kind: 'json'; value: Record<string, unknown> }

/**
 * Reasoning the model wrote before what follows it, with the `signature` its provider needs to accept it back
 * (Anthropic's thinking blocks). `redacted`: the provider withheld the text and `signature` is all of it. Only the
 * format of the model that wrote it sends it upstream again; toward another it is left out, as providers themselves
 * leave an earlier turn's reasoning out of what the model reads.
 */
export interface HubReasoningPart {
  type: 'reasoning'
  text: string
  signature: string
  redacted: boolean
}

/**
 * A prompt-cache breakpoint the client set after one piece of its prompt (Anthropic's `cache_control`, Converse's
 * `cachePoint`): the prefix up to it is cached, for `ttl` where said. `path` is the client's field: the reader names
 * it as dropped, and a writer whose format has breakpoints places it and takes the name back (`cachePlaced`).
 */
export interface HubCachePoint {
  path: string
  ttl: '5m' | '1h' | undefined
}

/** One piece of a message; `cache`: a prompt-cache breakpoint after it. */
export type HubPart = (
  | { type: 'text'; text: string }
  /** The model declined; a format without a refusal channel renders it as text. */
  | { type: 'refusal'; text: string }
  | { type: 'media'; media: HubMedia; filename: string | undefined }
  /** `signature`: an opaque token the producing model needs back with the call (Gemini's thought signature). */
  | { type: 'tool_call'; id: string; name: string; args: Record<string, unknown>; signature: string | undefined }
  /** Tool results live in user turns, next to any text the user adds; `error`: the tool failed and says why. */
  | { type: 'tool_result'; id: string; name: string; output: HubToolOutput; error: boolean }
  | HubReasoningPart
) & { cache?: HubCachePoint }

/** One turn of the conversation; a `system` turn is an instruction given mid-conversation (text parts only). */
export interface HubMessage {
  role: 'user' | 'assistant' | 'system'
  parts: HubPart[]
}

/** A function the model may call. */
export interface HubFunction {
  name: string
  description: string | undefined
  /** The arguments' schema; undefined for a function without parameters. */
  parameters: JsonSchema | undefined
}

/** Whether and which tools the model must call. `only` narrows a required call to these names. */
export interface HubToolChoice {
  mode: 'auto' | 'none' | 'required'
  only: string[] | undefined
}

/** The shape the answer must take. */
export type HubOutput =
  | { type: 'json' }
  | { type: 'json_schema'; name: string | undefined; description: string | undefined; schema: JsonSchema; strict: boolean }

/** The named reasoning efforts, least first. */
export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const

/** A named reasoning effort. */
export type HubEffort = (typeof EFFORTS)[number]

/** True for a named reasoning effort. */
export const isEffort = (value: string): value is HubEffort => (EFFORTS as readonly string[]).includes(value)

/**
 * How much the model thinks: a named effort or a token budget, whichever the client said. A budget of 0 turns
 * thinking off; -1 leaves it to the model (Gemini's dynamic thinking, Anthropic's adaptive thinking).
 */
export type HubReasoning = { effort: HubEffort } | { budget: number }

/** Request members some formats have no field for: a writer whose format lacks one refuses it (see `HubRequest.fields`). */
export type HubOptional =
  | 'candidates'
  | 'seed'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'topK'
  | 'parallelToolCalls'
  | 'output'
  | 'toolChoice'
  | 'stop'
  | 'showReasoning'
  | 'temperature'
  | 'topP'
  | 'reasoning'

/** A chat request in neutral terms. Undefined members were not set and take the target's defaults. */
export interface HubRequest {
  /** System instruction, one entry per text part, in order. */
  system: string[]
  messages: HubMessage[]
  tools: HubFunction[]
  /** Every tool's arguments must follow its schema exactly (constrained decoding); all tools or none. */
  strictTools: boolean
  toolChoice: HubToolChoice | undefined
  output: HubOutput | undefined
  temperature: number | undefined
  topP: number | undefined
  maxOutputTokens: number | undefined
  stop: string[] | undefined
  candidates: number | undefined
  seed: number | undefined
  presencePenalty: number | undefined
  frequencyPenalty: number | undefined
  reasoning: HubReasoning | undefined
  /** Sampling from the `topK` likeliest tokens. */
  topK: number | undefined
  /** False: at most one tool call per answer; undefined: as many as the model makes. */
  parallelToolCalls: false | undefined
  /** The client asked to see the model's reasoning (Gemini's `thinkingConfig.includeThoughts`); undefined: not asked. */
  showReasoning: true | undefined
  /** The client asked for the usage in its stream (OpenAI's `stream_options.include_usage`; Gemini always sends it). */
  includeUsage: boolean
  /** Prompt-cache breakpoints after a system entry and after a tool, by their index. @default none */
  cache?: { system: Map<number, HubCachePoint>; tools: Map<number, HubCachePoint> }
  /** The client's own field path of each optional member it set, for the refusal of a writer whose format lacks it. */
  fields: Partial<Record<HubOptional, string>>
  /**
   * Fields of the client's body that only hint the provider (a cache key, metadata, a storage flag): left out of the
   * translation, never refused, and named to the client (`x-model-gateway-dropped`) by these paths.
   */
  dropped: string[]
  /**
   * Values the writer lowered to what the target model takes (a thinking budget above its maximum), as
   * `<client's path>=<value sent>`, named to the client (`x-model-gateway-clamped`).
   */
  clamped: string[]
}

/** Why a choice ended; `native` keeps the source format's own word for it. */
export interface HubFinish {
  reason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other'
  native: string | undefined
  /** The stop sequence that ended it, where the format says which (Anthropic's `stop_sequence`). */
  sequence?: string
}

/**
 * Token usage. `input` includes tool-use prompt tokens and the tokens read from or written to a prompt cache;
 * `output` includes reasoning tokens.
 */
export interface HubUsage {
  input: number
  output: number
  total: number
  /** Input tokens read from a prompt cache. */
  cachedInput: number | undefined
  /** Input tokens written to a prompt cache (Anthropic bills them apart). */
  cacheWrite: number | undefined
  reasoning: number | undefined
  toolPrompt: number | undefined
}

/** One alternative answer. */
export interface HubChoice {
  index: number
  parts: HubPart[]
  finish: HubFinish | undefined
}

/** A whole (non-streaming) answer. */
export interface HubResponse {
  id: string | undefined
  model: string | undefined
  /** Unix seconds. */
  created: number | undefined
  choices: HubChoice[]
  usage: HubUsage | undefined
  /** The prompt itself was refused (Gemini's `promptFeedback.blockReason`); there are no choices then. */
  blocked: string | undefined
}

/** An error in neutral terms; the HTTP status travels beside it and is kept. */
export interface HubError {
  message: string
  /** A machine-readable code or status name from the source format. */
  code: string | undefined
  param: string | undefined
}

/** One step of a streamed answer. `choice` is the index of the alternative it belongs to. */
export type HubStreamEvent =
  | { type: 'meta'; id: string | undefined; model: string | undefined; created: number | undefined }
  | { type: 'text'; choice: number; text: string }
  | { type: 'refusal'; choice: number; text: string }
  /**
   * A fragment of a tool call. `index` numbers the calls of one choice from 0; the first fragment of a call
   * carries its id and name, every fragment a piece of the arguments' JSON text.
   */
  | {
      type: 'tool_call'
      choice: number
      index: number
      id: string | undefined
      name: string | undefined
      args: string
      signature: string | undefined
    }
  /**
   * A fragment of reasoning: its text continues the choice's open reasoning part (a new one opens after any other
   * part, or after a signed one); its `signature`, once it comes, closes the part.
   */
  | { type: 'reasoning'; choice: number; text: string; signature: string | undefined; redacted: boolean }
  | { type: 'finish'; choice: number; finish: HubFinish }
  | { type: 'usage'; usage: HubUsage }
  | { type: 'error'; status: number; error: HubError }

/** The event that breaks a stream whose upstream sent something that is not its format. */
export function unreadable(): HubStreamEvent {
  return {
    type: 'error',
    status: 502,
    error: { message: 'The upstream sent a stream event the gateway could not read.', code: undefined, param: undefined },
  }
}

/** Refuses a member the writer's format has no field for, by the client's own name for it. */
export function lacking(hub: HubRequest, member: HubOptional, what: string): never {
  return inexpressible(hub.fields[member] ?? member, what)
}

/**
 * A member the target has no field for, or refuses in this request, that changes how the model samples or what the
 * answer shows rather than what it can do (top-k, a temperature Anthropic refuses with thinking on, thought
 * summaries): dropped and named like a hint, or refused by the client's name for it when translation is strict.
 */
export function dropOrRefuse(hub: HubRequest, strict: boolean, member: HubOptional, what: string): void {
  if (strict) lacking(hub, member, what)
  hub.dropped.push(hub.fields[member] ?? member)
}

/** A cache breakpoint the writer placed: no longer named as dropped. */
export function cachePlaced(hub: HubRequest, point: HubCachePoint): void {
  const at = hub.dropped.indexOf(point.path)
  if (at !== -1) hub.dropped.splice(at, 1)
}

/** A cache breakpoint's time to live as Anthropic and Converse both spell it, or undefined for the default. */
export const cacheTtl = (value: unknown): HubCachePoint['ttl'] => (value === '5m' || value === '1h' ? value : undefined)

/** Names a value the writer lowered to `value`, by the client's own path for it. */
export function clamp(hub: HubRequest, member: HubOptional, value: number): void {
  hub.clamped.push(`${hub.fields[member] ?? member}=${value}`)
}

/** What kind of media the hub carries for a MIME type: what every format takes, or undefined. */
export function mediaClass(mimeType: string): 'image' | 'audio' | 'document' | undefined {
  const type = mimeType.toLowerCase()
  if (/^image\/(png|jpeg|webp|gif|heic|heif)$/.test(type)) return 'image'
  if (type === 'audio/wav' || type === 'audio/mp3' || type === 'audio/mpeg') return 'audio'
  if (type === 'application/pdf') return 'document'
  return undefined
}

/** The image type a URL's file extension names, if it names one. */
export function imageTypeOfUrl(url: string): string | undefined {
  const ext = /\.(png|jpe?g|webp|gif|heic|heif)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase()
  return ext === undefined ? undefined : `image/${ext === 'jpg' ? 'jpeg' : ext}`
}

/** A tool's output as the text a format without JSON results carries; `{ output: text }` is Gemini's wrapper of plain text. */
export function toolOutputText(output: HubToolOutput): string {
  if (output.kind === 'text') return output.text
  const keys = Object.keys(output.value)
  if (keys.length === 1 && keys[0] === 'output' && typeof output.value.output === 'string') return output.value.output
  return JSON.stringify(output.value)
}

/** The gateway's token counts of a hub usage. */
export function tokenCounts(usage: HubUsage): TokenCounts {
  const { input, output } = usage
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    cached_input_tokens: Math.min(usage.cachedInput ?? 0, input),
    cache_write_tokens: Math.min(usage.cacheWrite ?? 0, input),
    reasoning_tokens: Math.min(usage.reasoning ?? 0, output),
  }
}
