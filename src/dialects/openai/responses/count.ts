// `POST /responses/input_tokens` as the upstream side of a translated token count: the request written as the
// Responses request it counts, with only the fields the counting endpoint takes; the answer's `input_tokens` read as
// the hub's input tokens.
import type { CallPlan, UpstreamFormat } from '../../../translate/format.js'
import type { HubRequest } from '../../../translate/hub.js'
import { countedHubResponse } from '../../shared.js'
import { responsesFormat } from './index.js'
import { responsesRequestFromHub } from './upstream-request.js'

/**
 * The Responses request fields the counting endpoint takes and that change what is counted: the others
 * (`store`, `stream`, `include`, `max_output_tokens`, sampling) it refuses as unknown parameters.
 */
const COUNTED_FIELDS = ['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning'] as const

/** Token counting on an OpenAI upstream: the whole request (instructions and tools too) counted as OpenAI counts it. */
export const inputTokensFormat: UpstreamFormat = {
  requestFromHub: (hub: HubRequest, plan: CallPlan) => {
    const whole = responsesRequestFromHub(hub, { ...plan, stream: false }) as unknown as Record<string, unknown>
    const body: Record<string, unknown> = {}
    for (const field of COUNTED_FIELDS) if (whole[field] !== undefined) body[field] = whole[field]
    return body
  },
  responseToHub: (body) => countedHubResponse((body as { input_tokens?: unknown } | null)?.input_tokens),
  errorToHub: responsesFormat.errorToHub,
  streamDecoder: responsesFormat.streamDecoder,
}
