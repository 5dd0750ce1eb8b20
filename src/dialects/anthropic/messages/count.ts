// `POST /v1/messages/count_tokens` on both sides of a translated token count: the body is a Messages request without
// `max_tokens`, the answer `{ input_tokens }`.
import type { CallPlan, ClientFormat, UpstreamFormat } from '../../../translate/format.js'
import type { HubRequest } from '../../../translate/hub.js'
import { countedHubResponse } from '../../shared.js'
import { messagesFormat } from './index.js'
import { messagesRequestFromHub, messagesRequestToHub } from './request.js'

/** The count-tokens format's reader and writer, for a model whose upstream counts tokens its own way. */
export const messagesCountFormat: ClientFormat = {
  requestToHub(body) {
    // A count has no output limit: the message reader requires one, and it changes no input token.
    const hub = messagesRequestToHub({ ...body, max_tokens: 1 })
    hub.maxOutputTokens = undefined
    return hub
  },
  responseFromHub: (hub) => ({ input_tokens: hub.usage?.input ?? 0 }),
  errorFromHub: messagesFormat.errorFromHub,
  streamEncoder: messagesFormat.streamEncoder,
}

/**
 * The Messages request fields the counting endpoint takes: the others (`max_tokens`, `stream`, sampling, stop
 * sequences) change no input token, and it refuses them as extra inputs.
 */
const COUNTED_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking'] as const

/**
 * Token counting on an Anthropic upstream, for a client of another format (a Gemini `:countTokens`): the request
 * written as the Messages request it counts, system and tools included, and `input_tokens` read as the hub's input.
 */
export const messagesCountUpstreamFormat: UpstreamFormat = {
  requestFromHub: (hub: HubRequest, plan: CallPlan) => {
    const whole = messagesRequestFromHub(hub, { ...plan, stream: false }) as unknown as Record<string, unknown>
    const body: Record<string, unknown> = {}
    for (const field of COUNTED_FIELDS) if (whole[field] !== undefined) body[field] = whole[field]
    return body
  },
  responseToHub: (body) => countedHubResponse((body as { input_tokens?: unknown } | null)?.input_tokens),
  errorToHub: messagesFormat.errorToHub,
  streamDecoder: messagesFormat.streamDecoder,
}
