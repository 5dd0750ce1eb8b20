// Generate-content responses, usage, finish reasons and errors ⇄ the hub.

import { isObject } from '../../../json/value.js'
import { carriedWith, carry, unpack } from '../../../translate/carry.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubChoice, HubError, HubFinish, HubPart, HubReasoningPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import { array, at, type JsonObject, object, optional, string } from '../../../translate/readers.js'
import { googleStatus } from '../status.js'
import type { GeminiCandidate, GeminiErrorBody, GeminiPart, GeminiResponse, GeminiUsage } from './wire.js'

/** Gemini's reasons for stopping that mean "the content was withheld". */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
])

/** A Gemini finish reason in hub terms. Gemini says STOP after a function call; the caller knows if there was one. */
export function finishToHub(value: unknown, calledTools: boolean): HubFinish | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  const reason: HubFinish['reason'] =
    value === 'STOP'
      ? calledTools
        ? 'tool_calls'
        : 'stop'
      : value === 'MAX_TOKENS'
        ? 'length'
        : FILTERED.has(value)
          ? 'content_filter'
          : 'other'
  return { reason, native: value }
}

const FINISH_FROM_HUB: Readonly<Record<HubFinish['reason'], string>> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
  other: 'OTHER',
}

/** A hub finish as a Gemini finish reason. */
export function finishFromHub(finish: HubFinish): string {
  return FINISH_FROM_HUB[finish.reason]
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)
const maybe = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined)

/** Gemini usage in hub terms: input = prompt + tool-use prompt tokens, output = candidates + thoughts tokens. */
export function usageToHub(value: unknown): HubUsage | undefined {
  if (!isObject(value)) return undefined
  const toolPrompt = maybe(value.toolUsePromptTokenCount)
  const reasoning = maybe(value.thoughtsTokenCount)
  const input = count(value.promptTokenCount) + count(toolPrompt)
  const output = count(value.candidatesTokenCount) + count(reasoning)
  return {
    input,
    output,
    total: input + output,
    cachedInput: maybe(value.cachedContentTokenCount),
    cacheWrite: undefined,
    reasoning,
    toolPrompt,
  }
}

/** Hub usage as Gemini usage: the parts the hub folds into input and output are taken out again. */
export function usageFromHub(usage: HubUsage): GeminiUsage {
  const out: GeminiUsage = {
    promptTokenCount: usage.input - (usage.toolPrompt ?? 0),
    candidatesTokenCount: usage.output - (usage.reasoning ?? 0),
    totalTokenCount: usage.total,
  }
  if (usage.cachedInput !== undefined) out.cachedContentTokenCount = usage.cachedInput
  if (usage.reasoning !== undefined) out.thoughtsTokenCount = usage.reasoning
  if (usage.toolPrompt !== undefined) out.toolUsePromptTokenCount = usage.toolPrompt
  return out
}

/**
 * The id of the `n`th call of a candidate when Gemini gave it none: the same for the same answer, whole or
 * streamed, and distinct across answers, so a client's history maps every result back to its call.
 */
export function answerCallId(responseId: string | undefined, plan: CallPlan, candidate: number, n: number): string {
  return `call_${responseId ?? plan.requestId}_${candidate}_${n}`
}

/**
 * The hub parts of one candidate's content; thought summaries are not part of the answer. A thought signature the
 * gateway packed brings back the reasoning before its part (see `carry.ts`).
 */
export function candidateParts(content: unknown, path: string, id: (n: number) => string, firstCall = 0): HubPart[] {
  if (!isObject(content)) return []
  const parts: HubPart[] = []
  let calls = firstCall
  for (const [i, item] of (optional(content, 'parts', path, array) ?? []).entries()) {
    const where = at(at(path, 'parts'), i)
    const part = object(item, where)
    if (part.thought === true) continue
    const { reasoning, signature } = unpack(typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined)
    parts.push(...reasoning)
    if (typeof part.text === 'string') {
      if (part.text !== '') parts.push({ type: 'text', text: part.text })
    } else if (isObject(part.functionCall)) {
      const call = part.functionCall
      parts.push({
        type: 'tool_call',
        id: typeof call.id === 'string' ? call.id : id(calls),
        name: string(call.name, at(where, 'functionCall.name')),
        args: isObject(call.args) ? call.args : {},
        signature,
      })
      calls++
    }
  }
  return parts
}

/** Reads an upstream generate-content response into the hub. */
export function geminiResponseToHub(body: unknown, plan: CallPlan): HubResponse {
  const response = object(body, '')
  const responseId = optional(response, 'responseId', '', string)
  const candidates = optional(response, 'candidates', '', array) ?? []
  const choices = candidates.map((item, i): HubChoice => {
    const candidate = object(item, `candidates[${i}]`)
    const index = typeof candidate.index === 'number' ? candidate.index : i
    const parts = candidateParts(candidate.content, `candidates[${i}].content`, (n) => answerCallId(responseId, plan, index, n))
    return {
      index,
      parts,
      finish: finishToHub(
        candidate.finishReason,
        parts.some((part) => part.type === 'tool_call'),
      ),
    }
  })
  const feedback = isObject(response.promptFeedback) ? response.promptFeedback : {}
  return {
    id: responseId,
    model: optional(response, 'modelVersion', '', string),
    created: undefined,
    choices,
    usage: usageToHub(response.usageMetadata),
    blocked: typeof feedback.blockReason === 'string' ? feedback.blockReason : undefined,
  }
}

/**
 * A hub part of an answer as a Gemini part, carrying `reasoning` (another format's, which came before it) in its
 * thought signature, with the call's own signature if it has one.
 */
export function answerPart(part: HubPart, reasoning: readonly HubReasoningPart[] = []): GeminiPart | undefined {
  let out: GeminiPart
  if (part.type === 'text' || part.type === 'refusal') out = { text: part.text }
  else if (part.type === 'tool_call') out = { functionCall: { id: part.id, name: part.name, args: part.args } }
  else return undefined
  const signature = carriedWith(reasoning, part.type === 'tool_call' ? part.signature : undefined)
  if (signature !== undefined) out.thoughtSignature = signature
  return out
}

/** An empty text part, carrying reasoning that nothing came after (a Gemini part may hold a signature and no text). */
export const reasoningOnly = (reasoning: readonly HubReasoningPart[]): GeminiPart => ({
  text: '',
  thoughtSignature: carry({ reasoning: [...reasoning], signature: undefined }),
})

/** Whether the client asked to see the model's thoughts (`thinkingConfig.includeThoughts`), as Gemini shows them. */
export function showsThoughts(plan: CallPlan): boolean {
  const config = plan.request.generationConfig ?? plan.request.generation_config
  if (!isObject(config)) return false
  const thinking = config.thinkingConfig ?? config.thinking_config
  return isObject(thinking) && (thinking.includeThoughts ?? thinking.include_thoughts) === true
}

/**
 * Reasoning as a Gemini thought summary part (`thought: true`), for a client that asked for thoughts; undefined for
 * reasoning with no readable text (redacted, or a signature alone).
 */
export const thoughtPart = (part: HubReasoningPart): GeminiPart | undefined =>
  part.redacted || part.text === '' ? undefined : { text: part.text, thought: true }

/**
 * The Gemini parts of an answer's hub parts: reasoning rides on the part after it, and is also shown as a thought
 * part before it when the client asked for thoughts (`thoughts`).
 */
export function answerParts(parts: readonly HubPart[], thoughts = false): GeminiPart[] {
  const out: GeminiPart[] = []
  let reasoning: HubReasoningPart[] = []
  for (const part of parts) {
    if (part.type === 'reasoning') {
      reasoning.push(part)
      const thought = thoughts ? thoughtPart(part) : undefined
      if (thought) out.push(thought)
      continue
    }
    const written = answerPart(part, reasoning)
    if (!written) continue
    out.push(written)
    reasoning = []
  }
  if (reasoning.length > 0) out.push(reasoningOnly(reasoning))
  return out
}

/** The `responseId` of an answer: the upstream id without its chat prefix, else the request id. */
export function responseId(id: string | undefined, requestId: string): string {
  return id === undefined ? requestId : id.replace(/^chatcmpl-/, '')
}

/** Writes a hub answer as a generate-content response for the client. */
export function geminiResponseFromHub(hub: HubResponse, plan: CallPlan): GeminiResponse {
  const thoughts = showsThoughts(plan)
  const candidates = hub.choices.map((choice): GeminiCandidate => {
    const candidate: GeminiCandidate = {
      index: choice.index,
      content: { role: 'model', parts: answerParts(choice.parts, thoughts) },
    }
    if (choice.finish) candidate.finishReason = finishFromHub(choice.finish)
    return candidate
  })
  const out: GeminiResponse = { candidates }
  if (hub.blocked !== undefined) out.promptFeedback = { blockReason: hub.blocked }
  if (hub.usage) out.usageMetadata = usageFromHub(hub.usage)
  out.modelVersion = hub.model ?? plan.model
  out.responseId = responseId(hub.id, plan.requestId)
  return out
}

/** Reads a Google error body (or the text of a body that was not JSON); a streamed error may come in an array. */
export function geminiErrorToHub(body: unknown): HubError {
  const first: unknown = Array.isArray(body) ? body[0] : body
  const error: JsonObject | undefined = isObject(first) && isObject(first.error) ? first.error : undefined
  if (!error)
    return { message: typeof body === 'string' && body !== '' ? body : 'The upstream model failed.', code: undefined, param: undefined }
  return {
    message: typeof error.message === 'string' ? error.message : 'The upstream model failed.',
    code: typeof error.status === 'string' ? error.status : undefined,
    param: undefined,
  }
}

/** Writes a hub error as a Google error body, its code the upstream's status as Google answers it (`googleStatus`). */
export function geminiErrorFromHub(status: number, error: HubError): GeminiErrorBody {
  const google = googleStatus(status)
  return { error: { code: google.code, message: error.message, status: google.status } }
}
