// `POST /v1/messages/count_tokens` both ways. As the client's side of a translated token count: the body is a
// Messages request without `max_tokens`, the answer `{ input_tokens }`. As the upstream's side, for a count of another
// format (a Gemini `:countTokens`, a Bedrock CountTokens client's) on an Anthropic model: the request written as the Messages request it counts,
// with only the fields the counting endpoint takes.
import type { ClientFormat, UpstreamFormat } from '../../../translate/format.js'
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
 * The Messages request fields the counting endpoint takes and that change what is counted: the others (`max_tokens`,
 * `stream`, sampling, `stop_sequences`) it refuses as extra inputs.
 */
const COUNTED_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config'] as const

/** Token counting on an Anthropic upstream: the whole request (system prompt and tools too) counted as Anthropic counts it. */
export const messagesCountUpstreamFormat: UpstreamFormat = {
  requestFromHub(hub, plan) {
    const whole = messagesRequestFromHub(hub, { ...plan, stream: false }) as unknown as Record<string, unknown>
    const body: Record<string, unknown> = {}
    for (const field of COUNTED_FIELDS) if (whole[field] !== undefined) body[field] = whole[field]
    return body
  },
  responseToHub: (body) => countedHubResponse((body as { input_tokens?: unknown } | null)?.input_tokens),
  errorToHub: messagesFormat.errorToHub,
  streamDecoder: messagesFormat.streamDecoder,
}
