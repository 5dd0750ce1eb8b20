// `:countTokens` as the upstream side of a translated token count: the request written as the generate-content request
// it counts, the answer's `totalTokens` read as the hub's input tokens.
import type { CallPlan, UpstreamFormat } from '../../../translate/format.js'
import type { HubRequest } from '../../../translate/hub.js'
import { countedHubResponse } from '../../shared.js'
import { generateContentFormat } from './index.js'
import { geminiRequestFromHub } from './request.js'

/** Token counting on a Gemini upstream: the whole request (system instruction and tools too) counted as Gemini counts it. */
export const countTokensFormat: UpstreamFormat = {
  requestFromHub: (hub: HubRequest, plan: CallPlan) => ({
    generateContentRequest: { model: `models/${plan.upstreamModel}`, ...geminiRequestFromHub(hub, plan) },
  }),
  responseToHub: (body) => countedHubResponse((body as { totalTokens?: unknown } | null)?.totalTokens),
  errorToHub: generateContentFormat.errorToHub,
  streamDecoder: generateContentFormat.streamDecoder,
}
