// Converse answers read into the hub: the message's content blocks, its stop reason, its usage (cache reads and
// writes kept apart), and Converse's errors (`{ message }`, the type in `x-amzn-errortype`).

import { isObject } from '../../../json/value.js'
import type { CallPlan } from '../../../translate/format.js'
import type { HubError, HubFinish, HubPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import type { JsonObject } from '../../../translate/readers.js'

/** Converse's stop reasons in the hub's words. */
export const FINISH: Readonly<Record<string, HubFinish['reason']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
}

/** A Converse stop reason as a hub finish. */
export function finishOf(reason: unknown): HubFinish | undefined {
  return typeof reason === 'string' ? { reason: FINISH[reason] ?? 'other', native: reason } : undefined
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0)

/** Converse usage: `inputTokens` are the uncached ones, so input is all three prompt counts. */
export function usageOf(usage: unknown): HubUsage | undefined {
  if (!isObject(usage)) return undefined
  const cacheRead = count(usage.cacheReadInputTokens)
  const cacheWrite = count(usage.cacheWriteInputTokens)
  const input = count(usage.inputTokens) + cacheRead + cacheWrite
  const output = count(usage.outputTokens)
  return { input, output, total: input + output, cachedInput: cacheRead, cacheWrite, reasoning: undefined, toolPrompt: undefined }
}

/** One Converse content block as hub parts. */
function partsOf(block: unknown): HubPart[] {
  if (!isObject(block)) return []
  if (typeof block.text === 'string') return [{ type: 'text', text: block.text }]
  if (isObject(block.toolUse)) {
    const { toolUseId, name, input } = block.toolUse
    return [{ type: 'tool_call', id: String(toolUseId), name: String(name), args: isObject(input) ? input : {}, signature: undefined }]
  }
  if (isObject(block.reasoningContent)) {
    const { reasoningText, redactedContent } = block.reasoningContent
    if (typeof redactedContent === 'string') return [{ type: 'reasoning', text: '', signature: redactedContent, redacted: true }]
    if (isObject(reasoningText)) {
      const signature = typeof reasoningText.signature === 'string' ? reasoningText.signature : ''
      return [{ type: 'reasoning', text: String(reasoningText.text ?? ''), signature, redacted: false }]
    }
  }
  return []
}

/** A Converse answer in the hub. */
export function converseResponseToHub(body: unknown, plan: CallPlan): HubResponse {
  const answer: JsonObject = isObject(body) ? body : {}
  const output = isObject(answer.output) ? answer.output : {}
  const message = isObject(output.message) ? output.message : {}
  const content = Array.isArray(message.content) ? message.content : []
  return {
    id: undefined,
    model: plan.model,
    created: undefined,
    choices: [{ index: 0, parts: content.flatMap(partsOf), finish: finishOf(answer.stopReason) }],
    usage: usageOf(answer.usage),
    blocked: undefined,
  }
}

/** A Converse error body (`{ message }`, rewritten to carry its type) in the hub. */
export function converseErrorToHub(body: unknown): HubError {
  const message =
    isObject(body) && typeof body.message === 'string'
      ? body.message
      : typeof body === 'string' && body !== ''
        ? body
        : 'The upstream model failed.'
  const code = isObject(body) && typeof body.type === 'string' ? body.type : undefined
  return { message, code, param: undefined }
}
