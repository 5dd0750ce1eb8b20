// Hub answers written as Converse answers, every member the AWS SDK's ConverseResponse requires: `output.message`,
// `stopReason`, `usage` (input, output, total, and the cache's two counts) and `metrics.latencyMs`. The inverse of
// ../converse/response.ts, whose stop-reason table it reads.
import type { CallPlan } from '../../../translate/format.js'
import type { HubError, HubFinish, HubPart, HubResponse, HubUsage } from '../../../translate/hub.js'
import type { JsonObject } from '../../../translate/readers.js'
import { FINISH } from '../converse/response.js'

/** The Converse stop reason of each hub reason, for a finish whose own word is not Converse's. */
const STOP_REASON: Readonly<Record<HubFinish['reason'], string>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'content_filtered',
  other: 'end_turn',
}

/** A hub finish in Converse's words: its own where it came from Converse, else the nearest. */
export function stopReasonOf(finish: HubFinish | undefined): string {
  if (finish === undefined) return 'end_turn'
  if (finish.native !== undefined && FINISH[finish.native] !== undefined) return finish.native
  if (finish.sequence !== undefined) return 'stop_sequence'
  return STOP_REASON[finish.reason]
}

/** Converse usage: `inputTokens` are the uncached prompt tokens, the cache's reads and writes apart. */
export function converseUsage(usage: HubUsage | undefined): JsonObject {
  if (usage === undefined) return { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
  const cacheRead = usage.cachedInput ?? 0
  const cacheWrite = usage.cacheWrite ?? 0
  const inputTokens = Math.max(0, usage.input - cacheRead - cacheWrite)
  const out: JsonObject = { inputTokens, outputTokens: usage.output, totalTokens: usage.input + usage.output }
  if (cacheRead > 0) out.cacheReadInputTokens = cacheRead
  if (cacheWrite > 0) out.cacheWriteInputTokens = cacheWrite
  return out
}

/**
 * `metrics.latencyMs` of a translated answer: 0, as the upstream reported no Bedrock invocation latency (the gateway's
 * own timings are in its `call:end` message and spans); required by the SDK's shape, and the same however often the
 * answer is written (a kept stream replays the same bytes).
 */
export function latencyOf(_plan: CallPlan): JsonObject {
  return { latencyMs: 0 }
}

/** One hub part as a Converse content block; media in an answer has no Converse block, and is left out. */
function blockOf(part: HubPart): JsonObject | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { text: part.text }
    case 'tool_call':
      return { toolUse: { toolUseId: part.id, name: part.name, input: part.args } }
    case 'reasoning': {
      if (part.redacted) return { reasoningContent: { redactedContent: part.signature } }
      const text: JsonObject = { text: part.text }
      if (part.signature !== '') text.signature = part.signature
      return { reasoningContent: { reasoningText: text } }
    }
    default:
      return undefined
  }
}

/** A hub answer as a Converse answer; a Converse answer has one choice, the first. */
export function converseResponseFromHub(hub: HubResponse, plan: CallPlan): JsonObject {
  const choice = hub.choices[0]
  const content = (choice?.parts ?? []).flatMap((part) => blockOf(part) ?? [])
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: hub.blocked !== undefined ? 'content_filtered' : stopReasonOf(choice?.finish),
    usage: converseUsage(hub.usage),
    metrics: latencyOf(plan),
  }
}

/** A hub error as Bedrock's body, `{ message }`: its type goes in `x-amzn-errortype`, by the status kept beside it. */
export function converseErrorFromHub(_status: number, error: HubError): JsonObject {
  return { message: error.message }
}
