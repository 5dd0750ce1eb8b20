// The Responses API's background mode as the gateway serves it: the object a background call shows before its
// upstream's own, its events as kept (the call's id in each, numbered from 0), and the shapes of an end the upstream
// did not write (a cancel, a failure, a process that stopped).
import type { BackgroundFormat, BackgroundStatus } from '../../dialect.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A Responses id: the gateway's request id of the create behind OpenAI's prefix. */
const ID = /^resp_([0-9A-HJKMNP-TV-Z]{26})$/

/** The events whose `response` ends the call, with the status they end it in. */
const ENDINGS: Readonly<Record<string, BackgroundStatus>> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
}

/** What the gateway writes in a `Response` the upstream has not answered yet, from the request as sent. */
function pending(id: string, request: Json, createdAt: number): Json {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'queued',
    background: true,
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : null,
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    reasoning: isObject(request.reasoning) ? { effort: request.reasoning.effort ?? null, summary: null } : null,
    store: true,
    temperature: typeof request.temperature === 'number' ? request.temperature : null,
    text: isObject(request.text) ? request.text : { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: typeof request.top_p === 'number' ? request.top_p : null,
    truncation: 'disabled',
    metadata: isObject(request.metadata) ? request.metadata : {},
  }
}

/** The Responses API's background mode (`background: true`, then `GET|DELETE /v1/responses/{id}`, `…/cancel`). */
export const responsesBackground: BackgroundFormat = {
  asks: (fields) => fields.background === true,
  // The gateway runs and keeps the call, so the upstream is asked for a plain stream: its events are what is kept.
  run: { drop: ['background'], set: { stream: true } },
  idOf: (requestId) => `resp_${requestId}`,
  requestIdOf: (id) => ID.exec(id)?.[1],
  pending,
  started: (object) => ({ ...object, status: 'in_progress' }),
  event(data, id) {
    const type = typeof data.type === 'string' ? data.type : undefined
    // The gateway wrote the call's own `response.created` when it was created: the upstream's would say it twice.
    if (type === undefined || type === 'response.created') return undefined
    if (!isObject(data.response)) {
      const message = typeof data.message === 'string' ? data.message : 'The upstream ended the response with an error.'
      return { event: data, ending: type === 'error' ? { status: 'failed', message } : undefined }
    }
    const response = { ...data.response, id, background: true }
    const status = ENDINGS[type]
    return { event: { ...data, response }, ending: status === undefined ? undefined : { status, object: response } }
  },
  ended(object, status, message) {
    const error = message === undefined ? null : { code: 'server_error', message }
    return { ...object, status, error }
  },
  endEvent: (object) => (object.status === 'failed' ? { type: 'response.failed', response: object } : undefined),
  createdEvent: (object) => ({ type: 'response.created', response: object }),
  objectOf: (event) => (isObject(event.response) ? event.response : undefined),
  errorMessage: (object) => (isObject(object.error) && typeof object.error.message === 'string' ? object.error.message : undefined),
  deleted: (id) => ({ id, object: 'response.deleted', deleted: true }),
}
