// `:countTokens` as the upstream side of a translated token count: the request written as the generate-content request
// it counts, the answer's `totalTokens` read as the hub's input tokens.
import type { CallPlan, UpstreamFormat } from '../../../translate/format.js'
import type { HubRequest, HubResponse } from '../../../translate/hub.js'
import { generateContentFormat } from './index.js'
import { geminiRequestFromHub } from './request.js'

/** The input tokens a `:countTokens` answer reports; 0 when it says none. */
function countedResponse(body: unknown): HubResponse {
  const total = (body as { totalTokens?: unknown } | null)?.totalTokens
  const input = typeof total === 'number' && Number.isSafeInteger(total) && total >= 0 ? total : 0
  const usage = {
    input,
    output: 0,
    total: input,
    cachedInput: undefined,
    cacheWrite: undefined,
    reasoning: undefined,
    toolPrompt: undefined,
  }
  return { id: undefined, model: undefined, created: undefined, choices: [], usage, blocked: undefined }
}

/** Token counting on a Gemini upstream: the whole request (system instruction and tools too) counted as Gemini counts it. */
export const countTokensFormat: UpstreamFormat = {
  requestFromHub: (hub: HubRequest, plan: CallPlan) => ({
    generateContentRequest: { model: `models/${plan.upstreamModel}`, ...geminiRequestFromHub(hub, plan) },
  }),
  responseToHub: countedResponse,
  errorToHub: generateContentFormat.errorToHub,
  streamDecoder: generateContentFormat.streamDecoder,
}
