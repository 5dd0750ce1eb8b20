// `:countTokens` on both sides of a translated token count: the request is the generate-content request it counts
// (`contents`, or a whole `generateContentRequest`), the answer `{ totalTokens }`, the hub's input tokens.
import type { CallPlan, ClientFormat, UpstreamFormat } from '../../../translate/format.js'
import type { HubRequest } from '../../../translate/hub.js'
import type { JsonObject } from '../../../translate/readers.js'
import { countedHubResponse } from '../../shared.js'
import { generateContentFormat } from './index.js'
import { geminiRequestFromHub, geminiRequestToHub } from './request.js'

/** Token counting on a Gemini upstream: the whole request (system instruction and tools too) counted as Gemini counts it. */
export const countTokensFormat: UpstreamFormat = {
  requestFromHub: (hub: HubRequest, plan: CallPlan) => ({
    generateContentRequest: { model: `models/${plan.upstreamModel}`, ...geminiRequestFromHub(hub, plan) },
  }),
  responseToHub: (body) => countedHubResponse((body as { totalTokens?: unknown } | null)?.totalTokens),
  errorToHub: generateContentFormat.errorToHub,
  streamDecoder: generateContentFormat.streamDecoder,
}

/**
 * The generate-content request a count asks about: its `generateContentRequest` (either spelling), else the body
 * itself (`contents`, and on Vertex AI `systemInstruction`, `tools` and `generationConfig` beside it). The model is
 * the path's: a `model` it names again is not part of what is counted.
 */
function countedRequest(body: JsonObject): JsonObject {
  const inner = body.generateContentRequest ?? body.generate_content_request
  const { model: _model, ...request } = (typeof inner === 'object' && inner !== null ? inner : body) as JsonObject
  return request
}

/** The count's reader and writer, for a model whose upstream counts tokens its own way (Anthropic's, OpenAI's). */
export const geminiCountFormat: ClientFormat = {
  requestToHub: (body) => geminiRequestToHub(countedRequest(body)),
  responseFromHub: (hub) => ({ totalTokens: hub.usage?.input ?? 0 }),
  errorFromHub: generateContentFormat.errorFromHub,
  streamEncoder: generateContentFormat.streamEncoder,
}
